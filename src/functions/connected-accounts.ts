import { createRoute, z } from '@hono/zod-openapi';
import { proveAccount } from '../channels/account-proof.ts';
import { requireScope } from '../domain/agent-keys.ts';
import {
  type ConnectedAccount,
  connectAccount,
  disconnectAccount,
  listConnectedAccounts,
  PROVIDERS,
} from '../domain/connected-accounts.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { listEnvelope, listSchema, PageQuery, pageWindow } from './list-envelope.ts';
import { iso } from './schemas.ts';

// GET/POST/DELETE /functions/v1/connected-accounts: the outside accounts an organization talks
// through. No answer ever carries a secret: only whether a webhook secret is set.

const path = '/connected-accounts';

const AccountSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    provider: z.enum(PROVIDERS),
    external_id: z.string(),
    name: z.string().nullable(),
    status: z.enum(['connected', 'needs_reconnect', 'disconnected']),
    has_webhook_secret: z.boolean(),
    created_by: z.uuid().nullable(),
    disconnected_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    verified_at: z.string().nullable(),
    verified_by: z.enum(['oauth', 'token']).nullable(),
    token_expires_at: z.string().nullable(),
    checked_at: z.string().nullable(),
    needs_reconnect_reason: z.string().nullable(),
  })
  .openapi('ConnectedAccount');

const accountJson = (a: ConnectedAccount) => ({
  id: a.id,
  organization_id: a.organization_id,
  provider: a.provider,
  external_id: a.external_id,
  name: a.name,
  status: a.status,
  has_webhook_secret: a.has_webhook_secret,
  created_by: a.created_by,
  disconnected_at: a.disconnected_at && iso(a.disconnected_at),
  created_at: iso(a.created_at),
  updated_at: iso(a.updated_at),
  verified_at: a.verified_at && iso(a.verified_at),
  verified_by: a.verified_by,
  token_expires_at: a.token_expires_at && iso(a.token_expires_at),
  checked_at: a.checked_at && iso(a.checked_at),
  needs_reconnect_reason: a.needs_reconnect_reason,
});

const list = createRoute({
  method: 'get',
  path,
  summary: 'The organization’s connected accounts, oldest first (members, and agents with read)',
  request: { query: PageQuery },
  responses: { 200: jsonResponse(listSchema(AccountSchema), 'Accounts'), ...errorResponses(400, 401, 403) },
});

const connect = createRoute({
  method: 'post',
  path,
  summary: 'Connect a WhatsApp number, Facebook Page, Instagram account or Shopify shop (owners and admins)',
  description:
    '`external_id` is the WhatsApp phone number id, the Page id, the Instagram professional account id or the ' +
    'shop domain. Before anything is stored the provider is asked whether the token acts for that id (WhatsApp: ' +
    'the phone number read with it; Facebook: `/me` is the Page; Instagram: `/me` is the account), and the app is ' +
    'subscribed to the account’s webhooks. 403 `account_not_verified` names the check that failed; 502 ' +
    '`provider_error` when the provider could not be asked or refused the subscription (nothing is stored). ' +
    'Connecting an account this organization already has refreshes its token (a reconnect); one it disconnected ' +
    'comes back with its history. Other organizations’ accounts never change the answer. The secrets are ' +
    'encrypted at rest and never returned; Shopify needs `webhook_secret` (the app’s secret).',
  request: jsonBody(
    z.object({
      provider: z.enum(PROVIDERS),
      external_id: z.string(),
      name: z.string().optional(),
      access_token: z.string(),
      webhook_secret: z.string().optional(),
    }),
  ),
  responses: { 201: jsonResponse(AccountSchema, 'Connected'), ...errorResponses(400, 401, 403, 409, 502) },
});

const disconnect = createRoute({
  method: 'delete',
  path,
  summary: 'Disconnect an account (owners and admins); its conversations and messages stay',
  request: jsonBody(z.strictObject({ id: z.uuid() })),
  responses: { 200: jsonResponse(AccountSchema, 'Disconnected'), ...errorResponses(400, 401, 403, 404) },
});

export function connectedAccounts(s: Services) {
  return newRouter()
    .openapi(list, async (c) => {
      const principal = c.get('principal');
      await requireScope(s, principal, 'read', 'Listing connected accounts');
      const page = c.req.valid('query');
      const { accounts, total } = await listConnectedAccounts(s, principal, pageWindow(page));
      return c.json(listEnvelope(accounts.map(accountJson), page, total), 200);
    })
    .openapi(connect, async (c) => {
      // The domain validates the body (limits and the Shopify rule); the route only types it.
      const account = await connectAccount(s, c.get('principal'), c.req.valid('json'), (input) =>
        proveAccount(s.config.graph, input),
      );
      return c.json(accountJson(account), 201);
    })
    .openapi(disconnect, async (c) => {
      const account = await disconnectAccount(s, c.get('principal'), c.req.valid('json').id);
      return c.json(accountJson(account), 200);
    });
}
