// One call of a Meta sign-in (Facebook Login, Embedded Signup, Instagram Login) and how its failure
// reaches the person: Meta refused (a used or expired code, a token that cannot read what the
// sign-in claimed) is 403 account_not_verified naming the check; Meta unreachable or failing on
// its side is 502 provider_error. Takes a URL (with the app secret or a token in its query where
// Meta's documented call puts it) and gives out the parsed JSON body. Nothing here logs, and an
// error never carries the URL, a token, a code or the app secret.
import { accountNotVerified, providerFailed } from '../platform/errors.ts';

export type SignInProvider = 'facebook' | 'whatsapp' | 'instagram';

const LABEL: Record<SignInProvider, string> = {
  facebook: 'Facebook',
  whatsapp: 'WhatsApp',
  instagram: 'Instagram',
};

export type Json = Record<string, unknown>;

/** What Meta said when it refused: Graph's {error: {code, error_subcode, message}} or Instagram's {code, error_message}. */
export type MetaRefusal = { code: number | null; subcode: number | null; message: string };

/**
 * `check` names the call for a person and for support ("the code exchange (GET /oauth/access_token)");
 * `secrets` are values a proxy's error page might echo and that must not be passed on.
 */
export async function metaCall(
  provider: SignInProvider,
  check: string,
  url: string,
  opts: {
    timeoutMs: number;
    form?: Record<string, string>;
    token?: string;
    method?: 'GET' | 'POST';
    secrets: string[];
  },
): Promise<Json> {
  let status: number;
  let text: string;
  try {
    const res = await fetch(url, {
      method: opts.method ?? (opts.form ? 'POST' : 'GET'),
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(opts.form ? { body: new URLSearchParams(opts.form).toString() } : {}),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    status = res.status;
    text = await res.text();
  } catch {
    throw unavailable(provider, check, null);
  }
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  if (status >= 200 && status < 300 && body && typeof body === 'object') return body as Json;
  const refusal = scrub(refusalOf(body), [...opts.secrets, opts.token ?? '']);
  // Graph marks its own trouble with 5xx, code 2 or is_transient: try again later, not a refusal.
  // (Code 1 is not one: Meta answers a wrong app secret with it.)
  const transient =
    status >= 500 || refusal.code === 2 || (body as { error?: Json })?.error?.is_transient === true;
  if (transient || status < 300) throw unavailable(provider, check, refusal);
  throw notConfirmed(provider, check, refusal);
}

/** 403: Meta did not confirm what the sign-in claims; the person starts again. */
export function notConfirmed(
  provider: SignInProvider,
  check: string,
  refusal: MetaRefusal | null,
  what?: string,
) {
  const why = refusal?.message ? `: ${refusal.message}` : '';
  return accountNotVerified(
    `${LABEL[provider]} did not confirm ${what ?? 'this sign-in'}${why}. Nothing was connected; start connecting again.`,
    { provider, check, ...(refusal ? { provider_error: refusal } : {}) },
  );
}

/** 502: Meta could not be asked, or failed on its side; nothing was connected. */
export function unavailable(provider: SignInProvider, check: string, refusal: MetaRefusal | null) {
  return providerFailed(
    `${LABEL[provider]} could not be reached or failed on its side; nothing was connected. Try again in a moment.`,
    { provider, check, ...(refusal ? { provider_error: refusal } : {}) },
  );
}

function refusalOf(body: unknown): MetaRefusal {
  const b = (body ?? {}) as Json;
  const graph = b.error && typeof b.error === 'object' ? (b.error as Json) : null;
  const num = (v: unknown) => (typeof v === 'number' ? v : null);
  if (graph)
    return {
      code: num(graph.code),
      subcode: num(graph.error_subcode),
      message: typeof graph.message === 'string' ? graph.message : 'refused',
    };
  // Instagram's token endpoints: {error_type, code, error_message}.
  return {
    code: num(b.code),
    subcode: null,
    message: typeof b.error_message === 'string' ? b.error_message : 'refused without an explanation',
  };
}

function scrub(r: MetaRefusal, secrets: string[]): MetaRefusal {
  let message = r.message.slice(0, 500);
  for (const s of secrets) if (s.length >= 8) message = message.split(s).join('[redacted]');
  return { ...r, message };
}

export const str = (v: unknown) =>
  typeof v === 'string' && v ? v : typeof v === 'number' ? String(v) : null;
