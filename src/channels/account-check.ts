// The daily connection check's questions to the providers (src/jobs/check-connections.ts): does a
// connected account's token still act for it, until when, and, for Instagram's 60-day tokens, a
// fresh one before it ends. Takes the Graph configuration and one account; gives out a CheckResult
// and never throws for anything a provider or the network does. Only a definite refusal of the
// token (Meta's code 190 and its kin, `is_valid: false`, a token that acts for another id) is
// `refused`; an outage, a 5xx, a rate limit or an answer it cannot read is `unknown`, and the
// caller changes nothing. Tokens travel in the Authorization header, except where Meta's API takes
// the token being inspected as a parameter (`debug_token`'s input_token).
import { type Answer, callGraph, type GraphClientConfig } from './graph-client.ts';
import type { GraphFailure } from './graph-errors.ts';

export type CheckProvider = 'whatsapp' | 'facebook' | 'instagram' | 'shopify';

export type CheckResult =
  /** The token works; `provesOwner`: the provider said it acts for this very id. */
  | { state: 'ok'; provesOwner: boolean; expiresAt: Date | null }
  /** The provider refused the token for good: the provider's words. */
  | { state: 'refused'; reason: string }
  /** Could not tell (outage, 5xx, throttling, an unreadable answer): nothing changes. */
  | { state: 'unknown'; reason: string }
  /** No check for this provider here. */
  | { state: 'skipped'; reason: string };

export type CheckConfig = Pick<GraphClientConfig, 'url' | 'instagramUrl' | 'version' | 'timeoutMs'> & {
  /** `{META_APP_ID}|{META_APP_SECRET}`: Meta's app token, which `debug_token` asks of its caller. */
  appAccessToken?: string;
  /** Shopify's shop check (src/channels/shopify-admin.ts); without it Shopify accounts are skipped. */
  checkShopify?: (shop: string, token: string) => Promise<CheckResult>;
};

export type CheckedAccount = { provider: CheckProvider; external_id: string; access_token: string };

export async function checkAccount(config: CheckConfig, account: CheckedAccount): Promise<CheckResult> {
  switch (account.provider) {
    case 'facebook':
      return config.appAccessToken ? debugPage(config, account) : readMe(config, account);
    case 'whatsapp':
      return checkWhatsApp(config, account);
    case 'instagram':
      return checkInstagram(config, account);
    case 'shopify':
      return config.checkShopify
        ? config.checkShopify(account.external_id, account.access_token)
        : { state: 'skipped', reason: 'No Shopify check is configured' };
  }
}

/**
 * A Page token by `debug_token` (Meta's answer for the app: valid, expiry, whose): a Page token's
 * `profile_id` is its Page. Without a profile id the token reads `/me` to say whose it is.
 */
async function debugPage(config: CheckConfig, account: CheckedAccount): Promise<CheckResult> {
  const debug = await debugToken(config, account.access_token);
  if (debug.state !== 'ok') return debug;
  const profile = str(debug.data.profile_id);
  if (!profile) {
    const me = await readMe(config, account);
    return me.state === 'ok' ? { ...me, expiresAt: debug.expiresAt } : me;
  }
  if (profile !== account.external_id) return actsForAnother(profile);
  return { state: 'ok', provesOwner: true, expiresAt: debug.expiresAt };
}

/** `/me` with a Page token is the Page. */
async function readMe(config: CheckConfig, account: CheckedAccount): Promise<CheckResult> {
  const answer = await callGraph(
    'GET',
    graph(config, '/me?fields=id,name'),
    account.access_token,
    undefined,
    config,
  );
  if (!answer.ok) return failed(answer);
  const id = str(body(answer).id);
  if (!id) return unreadable();
  if (id !== account.external_id) return actsForAnother(id);
  return { state: 'ok', provesOwner: true, expiresAt: null };
}

/** WhatsApp: the phone number read with the token (a token of another business cannot), and its expiry by `debug_token` when the app token is known. */
async function checkWhatsApp(config: CheckConfig, account: CheckedAccount): Promise<CheckResult> {
  let expiresAt: Date | null = null;
  if (config.appAccessToken) {
    const debug = await debugToken(config, account.access_token);
    if (debug.state !== 'ok') return debug;
    expiresAt = debug.expiresAt;
  }
  const path = `/${encodeURIComponent(account.external_id)}?fields=id,display_phone_number`;
  const answer = await callGraph('GET', graph(config, path), account.access_token, undefined, config);
  if (!answer.ok) return failed(answer);
  const id = str(body(answer).id);
  if (!id) return unreadable();
  if (id !== account.external_id) return actsForAnother(id);
  return { state: 'ok', provesOwner: true, expiresAt };
}

/** Instagram API with Instagram Login: `/me`'s user_id is the professional account's id. */
async function checkInstagram(config: CheckConfig, account: CheckedAccount): Promise<CheckResult> {
  const url = `${root(config.instagramUrl)}/${config.version}/me?fields=user_id,username`;
  const answer = await callGraph('GET', url, account.access_token, undefined, config);
  if (!answer.ok) return failed(answer);
  const id = str(body(answer).user_id);
  if (!id) return unreadable();
  if (id !== account.external_id) return actsForAnother(id);
  return { state: 'ok', provesOwner: true, expiresAt: null };
}

export type Refreshed =
  | { state: 'ok'; token: string; expiresAt: Date | null }
  | Exclude<CheckResult, { state: 'ok' }>;

/**
 * A fresh long-lived Instagram token for one that is valid and at least a day old (Instagram API
 * with Instagram Login, "Refresh a long-lived token": `GET /refresh_access_token?grant_type=
 * ig_refresh_token`, answering `{access_token, token_type, expires_in}`; 60 days from now).
 */
export async function refreshInstagramToken(
  config: CheckConfig,
  token: string,
  now: Date,
): Promise<Refreshed> {
  const url = `${root(config.instagramUrl)}/refresh_access_token?grant_type=ig_refresh_token`;
  const answer = await callGraph('GET', url, token, undefined, config);
  if (!answer.ok) return failed(answer);
  const b = body(answer);
  const fresh = typeof b.access_token === 'string' && b.access_token ? b.access_token : null;
  if (!fresh) return unreadable();
  const seconds = typeof b.expires_in === 'number' && b.expires_in > 0 ? b.expires_in : null;
  return { state: 'ok', token: fresh, expiresAt: seconds ? new Date(now.getTime() + seconds * 1000) : null };
}

type Debugged = { state: 'ok'; data: Record<string, unknown>; expiresAt: Date | null };

/** `GET /debug_token?input_token=…` with the app token: Meta's verdict on a token, for the app. */
async function debugToken(
  config: CheckConfig,
  token: string,
): Promise<Debugged | Exclude<CheckResult, { state: 'ok' }>> {
  const url = graph(config, `/debug_token?input_token=${encodeURIComponent(token)}`);
  const answer = await callGraph('GET', url, config.appAccessToken as string, undefined, config);
  if (!answer.ok) {
    // A refusal of the app token is the operator's configuration, not this account's token.
    const f = failed(answer);
    return f.state === 'refused'
      ? { state: 'unknown', reason: `Meta refused the app token: ${f.reason}` }
      : f;
  }
  const data = body(answer).data;
  if (!data || typeof data !== 'object') return unreadable();
  const d = data as Record<string, unknown>;
  if (d.is_valid !== true) {
    const e = d.error as { message?: unknown } | undefined;
    return { state: 'refused', reason: str(e?.message) ?? 'Meta says the token is no longer valid' };
  }
  const at = typeof d.expires_at === 'number' ? d.expires_at : 0; // 0: never expires
  return { state: 'ok', data: d, expiresAt: at > 0 ? new Date(at * 1000) : null };
}

/**
 * Meta's codes that say the token itself cannot act (Graph "Handle errors": 190 invalid or expired
 * token with its subcodes, 102 session, 10 and 200–299 permissions), and "cannot be loaded due to
 * missing permissions" (100/33) for the id the token was asked about. Everything else is unknown.
 */
function failed(f: GraphFailure): Exclude<CheckResult, { state: 'ok' }> {
  const { code, subcode, message } = f.error;
  const definite =
    !f.transient &&
    f.status !== null &&
    code !== null &&
    (code === 190 ||
      code === 102 ||
      code === 10 ||
      (code >= 200 && code <= 299) ||
      (code === 100 && subcode === 33));
  return definite
    ? { state: 'refused', reason: message || `Meta refused the token (code ${code})` }
    : { state: 'unknown', reason: message || f.error.type };
}

const actsForAnother = (id: string): CheckResult => ({
  state: 'refused',
  reason: `the token now acts for ${id}, not for this account`,
});
const unreadable = (): Exclude<CheckResult, { state: 'ok' }> => ({
  state: 'unknown',
  reason: 'the answer did not say whose the token is',
});
const body = (a: Extract<Answer, { ok: true }>) =>
  a.body && typeof a.body === 'object' ? (a.body as Record<string, unknown>) : {};
const str = (v: unknown) => (typeof v === 'string' && v ? v : typeof v === 'number' ? String(v) : null);
const root = (url: string) => url.replace(/\/+$/, '');
const graph = (c: CheckConfig, path: string) => `${root(c.url)}/${c.version}${path}`;
