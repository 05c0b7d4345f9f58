// Proof that a pasted token acts for the account it names, asked of the provider before anything
// is stored (docs/decisions.md "A pasted token is proven before it is stored"). Takes the Graph
// configuration and the connect's input; gives out a Proof, or throws 403 account_not_verified
// (the provider refused: the token cannot act for that id) or 502 provider_error (the provider
// could not be asked, or failed on its side). It also subscribes the app to the account's
// webhooks, since an account that receives nothing is not connected. Each check is exported on
// its own so the daily connection check can ask the same question again. Tokens travel in the
// Authorization header only (callGraph) and never appear in an error.
import { accountNotVerified, type ErrorDetails, providerFailed } from '../platform/errors.ts';
import { type Answer, callGraph, type GraphClientConfig } from './graph-client.ts';
import type { GraphFailure } from './graph-errors.ts';
import type { Proof, ProofInput } from './proof.ts';
import { proveShopifyAccount, type ShopifyAdminConfig } from './shopify-admin.ts';

export type ProofConfig = Pick<GraphClientConfig, 'url' | 'instagramUrl' | 'version' | 'timeoutMs'> & {
  /**
   * `{app-id}|{app-secret}`, the app token Meta asks of `debug_token`'s caller. Without it a token
   * inspects itself, which Meta allows for tokens issued to the app.
   */
  appAccessToken?: string;
};

/** What the provider said about one token: whose it is and until when. */
export type TokenCheck = { name: string | null; token_expires_at: Date | null };

const LABEL = { whatsapp: 'WhatsApp', facebook: 'Facebook', instagram: 'Instagram' } as const;
const NOUN = { whatsapp: 'phone number', facebook: 'Page', instagram: 'account' } as const;
type MetaProvider = keyof typeof LABEL;

// The webhook fields src/channels/meta-webhook.ts reads: messages and the echoes/postbacks beside them.
const PAGE_FIELDS = 'messages,messaging_postbacks,message_echoes';
const INSTAGRAM_FIELDS = 'messages';

export async function proveAccount(
  config: ProofConfig,
  input: ProofInput,
  shopify: ShopifyAdminConfig,
): Promise<Proof> {
  if (input.provider === 'shopify')
    return proveShopifyAccount(shopify, {
      shop: input.external_id,
      access_token: input.access_token,
      webhook_secret: input.webhook_secret ?? null,
    });
  const { provider, external_id: id, access_token: token } = input;
  const [check, subscription] = await checkedMeta(config, provider, id, token);
  await subscribe(config, provider, id, subscription, token);
  const webhook_secret = input.webhook_secret ?? null;
  return { provider, external_id: id, access_token: token, verified_by: 'token', webhook_secret, ...check };
}

/** What Meta says of the token for `id`, and where the app subscribes to the account's webhooks. */
async function checkedMeta(
  config: ProofConfig,
  provider: MetaProvider,
  id: string,
  token: string,
): Promise<[TokenCheck, string]> {
  switch (provider) {
    case 'whatsapp': {
      const check = await checkWhatsAppToken(config, id, token);
      return [check, `/${enc(await businessAccountOf(config, id, token))}/subscribed_apps`];
    }
    case 'facebook':
      return [
        await checkPageToken(config, id, token),
        `/${enc(id)}/subscribed_apps?subscribed_fields=${PAGE_FIELDS}`,
      ];
    case 'instagram':
      return [
        await checkInstagramToken(config, id, token),
        `/me/subscribed_apps?subscribed_fields=${INSTAGRAM_FIELDS}`,
      ];
  }
}

/**
 * WhatsApp: the phone number read with the token (Cloud API: GET /{phone-number-id}), named by
 * its verified name. A token of another business cannot read it.
 */
export async function checkWhatsAppToken(
  config: ProofConfig,
  phoneNumberId: string,
  token: string,
): Promise<TokenCheck> {
  const check = `GET /${phoneNumberId}?fields=id,display_phone_number,verified_name with the token`;
  const body = await ask(
    config,
    'whatsapp',
    phoneNumberId,
    check,
    'GET',
    graph(config, `/${enc(phoneNumberId)}?fields=id,display_phone_number,verified_name`),
    token,
  );
  if (str(body.id) !== phoneNumberId) throw notVerified('whatsapp', phoneNumberId, check);
  return { name: str(body.verified_name) ?? str(body.display_phone_number), token_expires_at: null };
}

/** Facebook: `/me` with a Page token is the Page itself; any other token is someone else. */
export async function checkPageToken(
  config: ProofConfig,
  pageId: string,
  token: string,
): Promise<TokenCheck> {
  // Read first by id: Graph refuses an id the token cannot see with a clear error, and it names the Page.
  const read = `GET /${pageId}?fields=id,name with the token`;
  const page = await ask(
    config,
    'facebook',
    pageId,
    read,
    'GET',
    graph(config, `/${enc(pageId)}?fields=id,name`),
    token,
  );
  const check = 'GET /me?fields=id,name with the token';
  const me = await ask(config, 'facebook', pageId, check, 'GET', graph(config, '/me?fields=id,name'), token);
  if (str(me.id) !== pageId) throw notVerified('facebook', pageId, check);
  return { name: str(me.name) ?? str(page.name), token_expires_at: null };
}

/** Instagram (API with Instagram Login): `/me`'s user_id is the professional account's id. */
export async function checkInstagramToken(
  config: ProofConfig,
  accountId: string,
  token: string,
): Promise<TokenCheck> {
  const read = `GET ${config.instagramUrl}/${accountId}?fields=id,username with the token`;
  await ask(
    config,
    'instagram',
    accountId,
    read,
    'GET',
    instagram(config, `/${enc(accountId)}?fields=id,username`),
    token,
  );
  const check = `GET ${config.instagramUrl}/me?fields=user_id,username with the token`;
  const me = await ask(
    config,
    'instagram',
    accountId,
    check,
    'GET',
    instagram(config, '/me?fields=user_id,username'),
    token,
  );
  if (str(me.user_id) !== accountId) throw notVerified('instagram', accountId, check);
  return { name: str(me.username), token_expires_at: null };
}

/**
 * The WhatsApp Business Account a phone number belongs to, as Meta documents for a shared WABA:
 * `debug_token`'s granular_scopes list the WABAs the token may manage; when there are several,
 * each one's phone numbers say which holds this one. Also when the token expires.
 */
export async function businessAccountOf(
  config: ProofConfig,
  phoneNumberId: string,
  token: string,
): Promise<string> {
  const check = 'GET /debug_token for the token (granular_scopes: whatsapp_business_management)';
  const inspector = config.appAccessToken ?? token;
  const body = await ask(
    config,
    'whatsapp',
    phoneNumberId,
    check,
    'GET',
    graph(config, `/debug_token?input_token=${enc(token)}`),
    inspector,
  );
  const data = (body.data ?? {}) as Record<string, unknown>;
  if (data.is_valid !== true) throw notVerified('whatsapp', phoneNumberId, check, debugError(data));
  const scopes = Array.isArray(data.granular_scopes)
    ? (data.granular_scopes as Record<string, unknown>[])
    : [];
  const wabas = [
    ...new Set(
      scopes
        .filter(
          (s) => s.scope === 'whatsapp_business_management' || s.scope === 'whatsapp_business_messaging',
        )
        .flatMap((s) => (Array.isArray(s.target_ids) ? s.target_ids.map(String) : [])),
    ),
  ];
  if (wabas.length === 1) return wabas[0] as string;
  for (const waba of wabas) {
    const list = `GET /${waba}/phone_numbers with the token`;
    const numbers = await ask(
      config,
      'whatsapp',
      phoneNumberId,
      list,
      'GET',
      graph(config, `/${enc(waba)}/phone_numbers?fields=id`),
      token,
    );
    const ids = Array.isArray(numbers.data) ? numbers.data.map((n: { id?: unknown }) => str(n?.id)) : [];
    if (ids.includes(phoneNumberId)) return waba;
  }
  throw notVerified('whatsapp', phoneNumberId, check);
}

/** The token's expiry by `debug_token` (0 means it never expires), for the connection check. */
export function expiryOf(data: Record<string, unknown>): Date | null {
  const at = typeof data.expires_at === 'number' ? data.expires_at : 0;
  return at > 0 ? new Date(at * 1000) : null;
}

/**
 * Subscribes the app to the account's webhooks. A refusal or an outage fails the connect with
 * 502 and nothing is stored: an account whose messages never arrive would look connected and
 * stay silent (docs/decisions.md).
 */
async function subscribe(
  config: ProofConfig,
  provider: MetaProvider,
  externalId: string,
  path: string,
  token: string,
) {
  const check = `POST ${path.split('?')[0]} with the token`;
  const url = provider === 'instagram' ? instagram(config, path) : graph(config, path);
  const answer = await callGraph('POST', url, token, undefined, config);
  if (answer.ok && (answer.body as { success?: unknown } | null)?.success !== false) return;
  const failure = answer.ok ? null : answer;
  throw providerFailed(
    `${LABEL[provider]} did not subscribe the app to ${NOUN[provider]} ${externalId}'s messages, so nothing was connected${failure ? `: ${failure.error.message}` : ''}`,
    {
      provider,
      external_id: externalId,
      check,
      ...(failure ? { provider_error: providerError(failure) } : {}),
    },
  );
}

/** One read; a refusal is the token's (403), an outage or a 5xx the provider's (502). */
async function ask(
  config: ProofConfig,
  provider: MetaProvider,
  externalId: string,
  check: string,
  method: 'GET' | 'POST',
  url: string,
  token: string,
): Promise<Record<string, unknown>> {
  const answer: Answer = await callGraph(method, url, token, undefined, config);
  if (answer.ok)
    return answer.body && typeof answer.body === 'object' ? (answer.body as Record<string, unknown>) : {};
  if (answer.transient || answer.status === null)
    throw providerFailed(
      `${LABEL[provider]} could not be asked about ${NOUN[provider]} ${externalId}; try again in a moment`,
      {
        provider,
        external_id: externalId,
        check,
        provider_error: providerError(answer),
      },
    );
  throw notVerified(provider, externalId, check, providerError(answer));
}

function notVerified(
  provider: MetaProvider,
  externalId: string,
  check: string,
  providerError?: ErrorDetails,
) {
  return accountNotVerified(
    `${LABEL[provider]} says this token can't act for ${NOUN[provider]} ${externalId}${providerError?.message ? `: ${providerError.message}` : ''}`,
    { provider, external_id: externalId, check, ...(providerError ? { provider_error: providerError } : {}) },
  );
}

const providerError = (f: GraphFailure) => ({ code: f.error.code, message: f.error.message });

const debugError = (data: Record<string, unknown>) => {
  const e = data.error as { code?: unknown; message?: unknown } | undefined;
  return e ? { code: typeof e.code === 'number' ? e.code : null, message: str(e.message) ?? '' } : undefined;
};

const enc = encodeURIComponent;
const str = (v: unknown) => (typeof v === 'string' && v ? v : typeof v === 'number' ? String(v) : null);
const graph = (c: ProofConfig, path: string) => `${c.url.replace(/\/+$/, '')}/${c.version}${path}`;
const instagram = (c: ProofConfig, path: string) =>
  `${c.instagramUrl.replace(/\/+$/, '')}/${c.version}${path}`;
