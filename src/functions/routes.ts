import { ACCOUNT_FUNCTIONS } from '../domain/account-state.ts';
import { mcpRoutes } from '../mcp/route.ts';
import { authenticate } from '../platform/http/authenticate.ts';
import { meter } from '../platform/http/meter.ts';
import { newRouter } from '../platform/http/openapi.ts';
import { requireOrganization } from '../platform/http/require-organization.ts';
import type { Services } from '../services.ts';
import { agentApiKeyCreate } from './agent-api-key-create.ts';
import { agentApiKeys } from './agent-api-keys.ts';
import { agentAuth } from './agent-auth.ts';
import { agentRegister } from './agent-register.ts';
import { agentUsage } from './agent-usage.ts';
import { billingSessions } from './billing-checkout.ts';
import { billingStatus } from './billing-status.ts';
import { connectFacebook } from './connect-facebook.ts';
import { connectInstagram } from './connect-instagram.ts';
import { connectOptions } from './connect-options.ts';
import { connectShopify } from './connect-shopify.ts';
import { connectWhatsApp } from './connect-whatsapp.ts';
import { connectedAccounts } from './connected-accounts.ts';
import { conversations } from './conversations.ts';
import { databaseDump } from './database-dump.ts';
import { exportFunction } from './export.ts';
import { internalWebhook } from './internal-webhook.ts';
import { invitations } from './invitations.ts';
import { orders } from './orders.ts';
import { organizationCreate } from './organization-create.ts';
import { organizationMembers } from './organization-members.ts';
import { organizationPlan } from './organization-plan.ts';
import { organizationSwitch } from './organization-switch.ts';
import { sendMessageFunctions } from './send-message.ts';
import { shopifyWebhook } from './shopify-webhook.ts';
import { socialPosts } from './social-posts.ts';
import { stripeWebhook } from './stripe-webhook.ts';
import { webhookEvents } from './webhook-events.ts';
import { whatsappWebhook } from './whatsapp-webhook.ts';

/**
 * Functions that act in the caller's current organization: a person without one is told how to
 * get one (no_organization). organization-create, -switch and invitations are the way out.
 * `name/*` covers `name` itself too (Hono): listing both would meter a call twice.
 */
const IN_ORGANIZATION = [
  'organization-members',
  'agent-api-key-create',
  'agent-api-keys',
  'agent-usage',
  'connected-accounts',
  'connect-shopify/*',
  'conversations/*',
  'whatsapp-send-message',
  'facebook-send-message',
  'instagram-send-message',
  'webhook-events',
  'social-posts',
  'content-calendar',
  'orders',
  'connect-options',
  'connect-start',
  'connect-facebook',
  'connect-facebook-select',
  'connect-whatsapp',
  'connect-instagram',
  'billing',
  'billing-checkout',
  'billing-portal',
  'export/*',
];

/**
 * Functions that take a bearer token; agent-register, agent-auth and the webhook receivers
 * (verified by the provider's signature) are public and limit themselves.
 */
const SIGNED_IN = [
  'organization-create',
  'invitations',
  'organization-switch',
  'organization-plan',
  'database-dump',
  ...IN_ORGANIZATION,
];

/** The public receivers, verified by their provider's signature or token; they take larger bodies. */
export const WEBHOOK_RECEIVERS = [
  'whatsapp-webhook',
  'meta-webhook',
  'shopify-webhook',
  'internal-webhook',
  'stripe-webhook',
];

/** /functions/v1/<name>: one file per function. */
export function functionRoutes(s: Services) {
  const app = newRouter();
  const signedIn = authenticate(s, { required: true });
  const metered = meter(s);
  const countedOnly = meter(s, 'count');
  for (const name of SIGNED_IN)
    app.use(`/${name}`, signedIn, ACCOUNT_FUNCTIONS.has(name) ? countedOnly : metered);
  for (const name of IN_ORGANIZATION) app.use(`/${name}`, requireOrganization());
  for (const r of [
    organizationCreate(s),
    organizationMembers(s),
    invitations(s),
    organizationSwitch(s),
    organizationPlan(s),
    databaseDump(s),
    exportFunction(s),
    agentRegister(s),
    agentAuth(s),
    agentApiKeyCreate(s),
    agentApiKeys(s),
    agentUsage(s),
    connectedAccounts(s),
    connectShopify(s),
    conversations(s),
    sendMessageFunctions(s),
    webhookEvents(s),
    whatsappWebhook(s),
    shopifyWebhook(s),
    socialPosts(s),
    orders(s),
    internalWebhook(s),
    connectOptions(s),
    connectFacebook(s),
    connectWhatsApp(s),
    connectInstagram(s),
    billingStatus(s),
    billingSessions(s),
    stripeWebhook(s),
  ]) {
    app.route('/', r);
  }
  // The MCP server authenticates and meters each JSON-RPC call itself (agents only).
  app.route('/', mcpRoutes(s));
  return app;
}
