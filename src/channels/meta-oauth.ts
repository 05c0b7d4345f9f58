// Facebook Login for Business and WhatsApp Embedded Signup, the service's side
// (docs/connecting-accounts.md): the dialog's address, the code exchange, the long-lived user
// token, the Pages a person manages with their tokens, a WhatsApp Business Account's numbers and
// the app's webhook subscription. Takes the app's configuration and what the browser brought back;
// gives out plain values. Tokens leave this file only as return values, never in an error.
import { type Json, metaCall, notConfirmed, type SignInProvider, str } from './meta-oauth-http.ts';

export type MetaOAuthConfig = {
  appId: string;
  appSecret: string;
  /** Facebook Login for Business configuration; without it the dialog asks by scope. */
  loginConfigId: string | undefined;
  whatsappConfigId: string | undefined;
  /** https://www.facebook.com, where browsers open the dialog. */
  dialogUrl: string;
  /** https://graph.facebook.com, where the service exchanges and reads. */
  graphUrl: string;
  version: string;
  timeoutMs: number;
};

/**
 * What "Connect with Facebook" asks for, and why: list the Pages and read their tokens; send and
 * receive Messenger; subscribe the app to the Page's webhooks; read engagement and publish posts
 * (social); the same for the Instagram business accounts linked to them; business_management so
 * Pages owned through a business portfolio are listed too.
 */
export const FACEBOOK_SCOPES = [
  'pages_show_list',
  'pages_messaging',
  'pages_manage_metadata',
  'pages_read_engagement',
  'pages_manage_posts',
  'instagram_basic',
  'instagram_manage_messages',
  'instagram_content_publish',
  'business_management',
];

/** The webhook fields src/channels/meta-webhook.ts reads for a Page (and its Instagram account). */
const PAGE_FIELDS = 'messages,messaging_postbacks,message_echoes';

const graph = (c: MetaOAuthConfig, path: string) => `${c.graphUrl.replace(/\/+$/, '')}/${c.version}${path}`;
const enc = encodeURIComponent;

/** The Facebook Login dialog the browser goes to (Login for Business by config_id when configured). */
export function facebookDialogUrl(c: MetaOAuthConfig, redirectUri: string, state: string): string {
  const q = new URLSearchParams({
    client_id: c.appId,
    redirect_uri: redirectUri,
    state,
    response_type: 'code',
  });
  if (c.loginConfigId) q.set('config_id', c.loginConfigId);
  else q.set('scope', FACEBOOK_SCOPES.join(','));
  return `${c.dialogUrl}/${c.version}/dialog/oauth?${q}`;
}

/**
 * Embedded Signup as the JS SDK's FB.login opens it (config_id, response_type code, extras with
 * sessionInfoVersion 3), in a popup the dashboard opens itself: the session-info message with the
 * WhatsApp Business Account and phone number ids comes to window.opener, the code to redirectUri.
 */
export function embeddedSignupUrl(c: MetaOAuthConfig, redirectUri: string, state: string): string {
  const q = new URLSearchParams({
    client_id: c.appId,
    redirect_uri: redirectUri,
    state,
    config_id: c.whatsappConfigId ?? '',
    response_type: 'code',
    override_default_response_type: 'true',
    extras: JSON.stringify({ setup: {}, featureType: '', sessionInfoVersion: '3' }),
  });
  return `${c.dialogUrl}/${c.version}/dialog/oauth?${q}`;
}

/**
 * The code the dialog gave for a token (a short-lived user token for Facebook Login; the business
 * token for Embedded Signup). Meta checks the code was issued to this app for this redirect_uri.
 */
export async function exchangeCode(
  c: MetaOAuthConfig,
  provider: SignInProvider,
  code: string,
  redirectUri: string,
): Promise<{ access_token: string; expires_in: number | null }> {
  const q = new URLSearchParams({
    client_id: c.appId,
    client_secret: c.appSecret,
    redirect_uri: redirectUri,
    code,
  });
  const body = await metaCall(
    provider,
    'the code exchange (GET /oauth/access_token)',
    graph(c, `/oauth/access_token?${q}`),
    {
      timeoutMs: c.timeoutMs,
      secrets: [c.appSecret, code],
    },
  );
  return tokenOf(provider, body, 'the code exchange (GET /oauth/access_token)');
}

/** A short-lived user token for a long-lived one (about 60 days): the Page tokens read with it never expire. */
export async function longLivedUserToken(c: MetaOAuthConfig, token: string) {
  const check = 'the long-lived token exchange (GET /oauth/access_token, grant_type=fb_exchange_token)';
  const q = new URLSearchParams({
    grant_type: 'fb_exchange_token',
    client_id: c.appId,
    client_secret: c.appSecret,
    fb_exchange_token: token,
  });
  const body = await metaCall('facebook', check, graph(c, `/oauth/access_token?${q}`), {
    timeoutMs: c.timeoutMs,
    secrets: [c.appSecret, token],
  });
  return tokenOf('facebook', body, check);
}

export type ManagedPage = {
  id: string;
  name: string;
  access_token: string;
  instagram: { id: string; username: string | null } | null;
};

/** The Pages the person manages, each with its Page token and linked Instagram business account. */
export async function managedPages(c: MetaOAuthConfig, userToken: string): Promise<ManagedPage[]> {
  const check = 'the Pages you manage (GET /me/accounts)';
  const fields = 'id,name,access_token,instagram_business_account{id,username}';
  const pages: ManagedPage[] = [];
  let url: string | null = graph(c, `/me/accounts?${new URLSearchParams({ fields, limit: '100' })}`);
  // Meta pages its answer; ten pages of 100 is more than any person picks from.
  for (let n = 0; url && n < 10; n++) {
    const body: Json = await metaCall('facebook', check, url, {
      timeoutMs: c.timeoutMs,
      token: userToken,
      secrets: [c.appSecret],
    });
    for (const p of Array.isArray(body.data) ? (body.data as Json[]) : []) {
      const id = str(p.id);
      const token = str(p.access_token);
      // A Page the person cannot act for comes without a token: it cannot be connected.
      if (!id || !token) continue;
      const ig = p.instagram_business_account as Json | undefined;
      const igId = ig ? str(ig.id) : null;
      pages.push({
        id,
        name: str(p.name) ?? id,
        access_token: token,
        instagram: igId ? { id: igId, username: str(ig?.username) } : null,
      });
    }
    const next = str((body.paging as Json | undefined)?.next);
    // Only follow Meta's own paging link back to the configured Graph address.
    url = next?.startsWith(`${c.graphUrl.replace(/\/+$/, '')}/`) ? next : null;
  }
  return pages;
}

export type PhoneNumber = { id: string; display_phone_number: string | null; verified_name: string | null };

/** A WhatsApp Business Account's phone numbers, read with the business token Embedded Signup gave. */
export async function wabaPhoneNumbers(
  c: MetaOAuthConfig,
  wabaId: string,
  token: string,
): Promise<PhoneNumber[]> {
  const check = `the WhatsApp Business Account's phone numbers (GET /${wabaId}/phone_numbers)`;
  const url = graph(c, `/${enc(wabaId)}/phone_numbers?fields=id,display_phone_number,verified_name`);
  const body = await metaCall('whatsapp', check, url, {
    timeoutMs: c.timeoutMs,
    token,
    secrets: [c.appSecret],
  });
  return (Array.isArray(body.data) ? (body.data as Json[]) : []).flatMap((n) => {
    const id = str(n.id);
    return id
      ? [{ id, display_phone_number: str(n.display_phone_number), verified_name: str(n.verified_name) }]
      : [];
  });
}

/**
 * Subscribes the app to an account's webhooks (a Page with its Page token and the fields the
 * service reads; a WhatsApp Business Account with the business token). An account whose messages
 * never arrive would look connected and stay silent, so a refusal fails the connect.
 */
export async function subscribeApp(
  c: MetaOAuthConfig,
  provider: 'facebook' | 'whatsapp',
  id: string,
  token: string,
): Promise<void> {
  const query = provider === 'facebook' ? `?subscribed_fields=${PAGE_FIELDS}` : '';
  const check = `the app's webhook subscription (POST /${id}/subscribed_apps)`;
  const body = await metaCall(provider, check, graph(c, `/${enc(id)}/subscribed_apps${query}`), {
    method: 'POST',
    timeoutMs: c.timeoutMs,
    token,
    secrets: [c.appSecret],
  });
  if (body.success !== true) throw notConfirmed(provider, check, null, 'the webhook subscription');
}

function tokenOf(provider: SignInProvider, body: Json, check: string) {
  const token = str(body.access_token);
  if (!token) throw notConfirmed(provider, check, null);
  return { access_token: token, expires_in: typeof body.expires_in === 'number' ? body.expires_in : null };
}
