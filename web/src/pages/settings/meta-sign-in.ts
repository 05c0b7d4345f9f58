import { invoke } from '../../lib/api';

// The Meta sign-in functions as the dashboard calls them (docs/connecting-accounts.md), and the
// messages the WhatsApp popup and its opener exchange.

export type SignIn = 'facebook' | 'whatsapp' | 'instagram';
export type SignInOption = { available: boolean; message: string | null; redirect_uri: string };
export type SignInOptions = Record<SignIn, SignInOption>;
export type FacebookPage = {
  id: string;
  name: string;
  instagram: { id: string; username: string | null } | null;
};
export type Connected = { accounts: { provider: string; external_id: string; name: string | null }[] };

export const connectOptions = () => invoke<SignInOptions>('connect-options');
export const connectStart = (provider: SignIn) =>
  invoke<{ url: string; state: string }>('connect-start', { body: { provider } });

/** What the redirect brought back: a code, or the error Meta sent instead. */
export type Returned = { state: string; code?: string; error?: string };

/** What the popup's callback page tells the page that opened it (same origin only). */
export type PopupResult = Returned & { type: 'svc-connect'; provider: SignIn };

/** Embedded Signup's session info: a JSON string from Meta's origin, as the JS SDK's listener reads it. */
export type SessionInfo = { waba_id?: string; phone_number_id?: string; cancelled?: boolean };

export function readSessionInfo(event: MessageEvent, dialogOrigin: string): SessionInfo | null {
  const fromMeta =
    event.origin === dialogOrigin || /^https:\/\/([a-z0-9-]+\.)*facebook\.com$/.test(event.origin);
  if (!fromMeta || typeof event.data !== 'string') return null;
  try {
    const m = JSON.parse(event.data) as { type?: string; event?: string; data?: Record<string, string> };
    if (m.type !== 'WA_EMBEDDED_SIGNUP') return null;
    if (m.event === 'FINISH' || m.event === 'FINISH_ONLY_WABA')
      return { waba_id: m.data?.waba_id, phone_number_id: m.data?.phone_number_id };
    return { cancelled: true };
  } catch {
    return null;
  }
}
