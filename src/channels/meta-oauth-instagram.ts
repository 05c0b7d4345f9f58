// Instagram API with Instagram Login, the service's side (docs/connecting-accounts.md): the
// authorization window's address, code → short-lived token (api.instagram.com, form body) →
// long-lived token (graph.instagram.com, 60 days), the account's /me, and the refresh the daily
// connection check calls before the 60 days end. Instagram Login has its own app id and secret
// (not the Meta app's). Tokens leave this file only as return values, never in an error.
import { type Json, metaCall, notConfirmed, str } from './meta-oauth-http.ts';

export type InstagramLoginConfig = {
  appId: string;
  appSecret: string;
  /** https://www.instagram.com, where browsers open the authorization window. */
  authorizeUrl: string;
  /** https://api.instagram.com, the code exchange. */
  apiUrl: string;
  /** https://graph.instagram.com: long-lived tokens, refreshes, /me. */
  graphUrl: string;
  version: string;
  timeoutMs: number;
};

/** Read the account, send and receive its direct messages, publish posts. */
export const INSTAGRAM_SCOPES = [
  'instagram_business_basic',
  'instagram_business_manage_messages',
  'instagram_business_content_publish',
];

export type InstagramToken = { access_token: string; expires_at: Date | null };

export function instagramAuthorizeUrl(c: InstagramLoginConfig, redirectUri: string, state: string): string {
  const q = new URLSearchParams({
    client_id: c.appId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: INSTAGRAM_SCOPES.join(','),
    state,
  });
  return `${c.authorizeUrl}/oauth/authorize?${q}`;
}

/** The window's code for a short-lived token (one hour) and the account's id. */
export async function instagramShortLivedToken(c: InstagramLoginConfig, code: string, redirectUri: string) {
  const check = 'the code exchange (POST api.instagram.com/oauth/access_token)';
  // Instagram appends `#_` to the redirect; a code copied with it would not match.
  const clean = code.replace(/#_?$/, '');
  const body = await metaCall('instagram', check, `${c.apiUrl}/oauth/access_token`, {
    timeoutMs: c.timeoutMs,
    form: {
      client_id: c.appId,
      client_secret: c.appSecret,
      grant_type: 'authorization_code',
      redirect_uri: redirectUri,
      code: clean,
    },
    secrets: [c.appSecret, clean],
  });
  // The documented answer is {data: [{access_token, user_id, permissions}]}; older apps get it flat.
  const first = Array.isArray(body.data) ? ((body.data[0] ?? {}) as Json) : body;
  const token = str(first.access_token);
  if (!token) throw notConfirmed('instagram', check, null);
  return { access_token: token, user_id: str(first.user_id) };
}

/** A short-lived token for a long-lived one (60 days, `expires_in` seconds). */
export async function instagramLongLivedToken(
  c: InstagramLoginConfig,
  shortLived: string,
): Promise<InstagramToken> {
  const check =
    'the long-lived token exchange (GET graph.instagram.com/access_token, grant_type=ig_exchange_token)';
  const q = new URLSearchParams({
    grant_type: 'ig_exchange_token',
    client_secret: c.appSecret,
    access_token: shortLived,
  });
  const body = await metaCall('instagram', check, `${c.graphUrl}/access_token?${q}`, {
    timeoutMs: c.timeoutMs,
    secrets: [c.appSecret, shortLived],
  });
  return longLived(body, check);
}

/** Whose token it is: the professional account's id (user_id) and username. */
export async function instagramMe(c: InstagramLoginConfig, token: string) {
  const check = 'the account (GET graph.instagram.com/me)';
  const body = await metaCall('instagram', check, `${c.graphUrl}/${c.version}/me?fields=user_id,username`, {
    timeoutMs: c.timeoutMs,
    token,
    secrets: [c.appSecret],
  });
  const id = str(body.user_id);
  if (!id) throw notConfirmed('instagram', check, null);
  return { user_id: id, username: str(body.username) };
}

/** Subscribes the app to the account's direct messages (an account whose messages never arrive would stay silent). */
export async function subscribeInstagram(c: InstagramLoginConfig, token: string): Promise<void> {
  const check = "the app's webhook subscription (POST graph.instagram.com/me/subscribed_apps)";
  const body = await metaCall(
    'instagram',
    check,
    `${c.graphUrl}/${c.version}/me/subscribed_apps?subscribed_fields=messages`,
    {
      method: 'POST',
      timeoutMs: c.timeoutMs,
      token,
      secrets: [c.appSecret],
    },
  );
  if (body.success !== true) throw notConfirmed('instagram', check, null, 'the webhook subscription');
}

function longLived(body: Json, check: string): InstagramToken {
  const token = str(body.access_token);
  if (!token) throw notConfirmed('instagram', check, null);
  const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : null;
  return { access_token: token, expires_at: seconds ? new Date(Date.now() + seconds * 1000) : null };
}
