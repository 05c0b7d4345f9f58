import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { ApiError, invoke } from '../../lib/api';
import { ErrorNote } from '../../ui/ErrorNote';
import {
  type Connected,
  connectOptions,
  connectStart,
  type PopupResult,
  readSessionInfo,
  type SessionInfo,
  type SignIn,
} from './meta-sign-in';

const LABELS: Record<SignIn, string> = {
  facebook: 'Connect with Facebook',
  whatsapp: 'Connect WhatsApp',
  instagram: 'Connect Instagram',
};

const HINTS: Record<SignIn, string> = {
  facebook: 'Sign in with Facebook and pick the Pages and their Instagram accounts to connect.',
  whatsapp: 'Set up or choose your WhatsApp Business number with Meta, in a window that opens.',
  instagram: 'Sign in with Instagram to connect your Instagram professional account.',
};

/**
 * Connecting by signing in with the provider. Facebook and Instagram send this page to the
 * provider's dialog; the provider sends it back to /app/accounts/connect/{provider}. WhatsApp's
 * Embedded Signup runs in a popup: Meta posts the business account and number ids to this page,
 * and the popup's callback page posts the code; with both, this page finishes the connect.
 */
export function SignInButtons() {
  const options = useQuery({ queryKey: ['connect-options'], queryFn: connectOptions });
  const queries = useQueryClient();
  const [busy, setBusy] = useState<SignIn | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const popup = useRef<{ window: Window | null; origin: string; info: SessionInfo | null } | null>(null);

  useEffect(() => {
    const onMessage = async (event: MessageEvent) => {
      const p = popup.current;
      if (!p) return;
      const info = readSessionInfo(event, p.origin);
      if (info) {
        p.info = info;
        return;
      }
      if (event.origin !== window.location.origin || event.source !== p.window) return;
      const result = event.data as PopupResult;
      if (result?.type !== 'svc-connect' || result.provider !== 'whatsapp') return;
      popup.current = null;
      try {
        const answer = await invoke<Connected>('connect-whatsapp', {
          body: {
            state: result.state,
            ...(result.code ? { code: result.code } : { error: result.error ?? 'access_denied' }),
            ...(result.code && p.info?.waba_id ? { waba_id: p.info.waba_id } : {}),
            ...(result.code && p.info?.phone_number_id ? { phone_number_id: p.info.phone_number_id } : {}),
          },
        });
        setDone(`Connected WhatsApp ${answer.accounts.map((a) => a.name ?? a.external_id).join(', ')}.`);
        await queries.invalidateQueries({ queryKey: ['connected-accounts'] });
      } catch (err) {
        setError(
          err instanceof ApiError && err.code === 'validation_error' && result.code
            ? new ApiError(
                'Meta finished without a WhatsApp number to connect. Add a phone number to your WhatsApp Business Account during the signup, then connect again.',
              )
            : err,
        );
      } finally {
        setBusy(null);
      }
    };
    window.addEventListener('message', onMessage);
    return () => window.removeEventListener('message', onMessage);
  }, [queries]);

  const begin = async (provider: SignIn) => {
    setError(null);
    setDone(null);
    setBusy(provider);
    // A popup must open in the click itself, or the browser blocks it: open it now, point it later.
    const win =
      provider === 'whatsapp'
        ? window.open('about:blank', 'svc-whatsapp-signup', 'width=720,height=800')
        : null;
    try {
      const { url } = await connectStart(provider);
      if (provider !== 'whatsapp') return window.location.assign(url);
      if (!win)
        throw new ApiError(
          'Your browser blocked the WhatsApp window: allow pop-ups for this site, then try again.',
        );
      popup.current = { window: win, origin: new URL(url).origin, info: null };
      win.location.href = url;
      // Closed without finishing: the buttons work again. (A finished popup's message may arrive
      // just after it closes, so wait a moment before giving up on it.)
      const watch = setInterval(() => {
        if (!win.closed) return;
        clearInterval(watch);
        setTimeout(() => {
          if (popup.current?.window !== win) return;
          popup.current = null;
          setBusy(null);
        }, 2000);
      }, 500);
    } catch (err) {
      win?.close();
      setError(err);
      setBusy(null);
    }
  };

  if (!options.data) return <ErrorNote error={options.error} />;
  return (
    <div className="sign-ins">
      {(['facebook', 'whatsapp', 'instagram'] as const).map((p) => {
        const o = options.data[p];
        return (
          <div key={p} className="sign-in">
            <button
              type="button"
              className="primary"
              disabled={!o.available || busy !== null}
              onClick={() => begin(p)}
            >
              {LABELS[p]}
            </button>
            <p className="hint">{o.available ? HINTS[p] : o.message}</p>
          </div>
        );
      })}
      <ErrorNote error={error} />
      {done && <p role="status">{done}</p>}
    </div>
  );
}
