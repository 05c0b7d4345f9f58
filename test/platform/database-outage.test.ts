// What this file protects (issue 26, section 2): while PostgreSQL is down, every surface says so
// the way its clients read it (503 service_unavailable with Retry-After: PostgREST's shape on
// /rest/v1, GoTrue's on /auth/v1, a JSON-RPC error on the MCP endpoint), webhook receivers answer
// 503 so that Meta and Shopify deliver again, no body carries the driver's words, and the same
// requests succeed once the server is back, from the same process, started nowhere again.
// PostgreSQL only: a server of the test's own (pg-cluster.ts), stopped and started for real.
import { AuthClient } from '@supabase/auth-js';
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/db.ts';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, rpcPost, setPlan } from '../helpers/mcp.ts';
import { type Cluster, startCluster } from '../helpers/pg-cluster.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { deliver, fixture, META_ENV } from '../webhooks/meta.ts';
import { connectShop, deliverShopify, SHOPIFY_ENV, shopifyOrder } from '../webhooks/shopify.ts';

const INTERNAL_TOKEN = 'internal-webhook-token-for-outage';
const PHONE_ID = '106540352242922';

let cluster: Cluster;
let svc: TestService;
let owner: Session;
/** An agent whose key check and plan the service has cached. */
let warm: string;
/** An agent the service has not seen yet: its key check needs the database. */
let cold: string;

/** A customer's WhatsApp message, signed by Meta: the same delivery each time. */
const deliverInbound = () =>
  deliver(
    svc,
    fixture('wa-text', { PHONE_NUMBER_ID: PHONE_ID, 'wamid.TEXT_ID': 'wamid.OUTAGE', WA_ID: '16315551181' }),
  );

describe.runIf(onPostgres())('while the database is down', () => {
  beforeAll(async () => {
    cluster = await startCluster();
    svc = await startTestService(
      { ...META_ENV, ...SHOPIFY_ENV, INTERNAL_WEBHOOK_TOKEN: INTERNAL_TOKEN },
      { databaseUrl: cluster.url },
    );
    owner = await signUp(svc, 'Outage Ltd');
    await setPlan(svc, owner, 'starter');
    warm = (await agentToken(svc, owner, ['read', 'write'])).token;
    cold = (await agentToken(svc, owner, ['read'])).token;
    expect((await rpcPost(svc, warm, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
    const wa = await call(svc, 'POST', '/functions/v1/connected-accounts', {
      token: owner.access_token,
      body: { provider: 'whatsapp', external_id: PHONE_ID, access_token: 'EAAG-outage' },
    });
    expect(wa.status).toBe(201);
    await connectShop(svc, owner);
    cluster.stop();
  });
  afterAll(async () => {
    await svc?.stop();
    cluster?.destroy();
  });

  /** 503, Retry-After, our error body, and nothing of the driver's or the server's words. */
  function unavailable(r: { status: number; headers: Headers }, body: unknown) {
    expect(r.status).toBe(503);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    const text = JSON.stringify(body);
    expect(text).not.toMatch(/ECONNREFUSED|terminat|postgres|127\.0\.0\.1|\bat \w+ \(|stack/i);
  }

  it('/rest/v1 answers 503 in PostgREST’s shape, to postgrest-js and to a raw request', async () => {
    const rest = new PostgrestClient(`${svc.url}/rest/v1`, {
      headers: { apikey: svc.anonKey, Authorization: `Bearer ${owner.access_token}` },
    });
    const read = await rest.from('contacts').select('id');
    expect(read.status).toBe(503);
    expect(read.error).toMatchObject({ code: 'PGRST000', hint: null });
    const write = await rest.from('contacts').insert({ first_name: 'Lost?' });
    expect(write.status).toBe(503);

    const raw = await call(svc, 'GET', '/rest/v1/orders?select=id', { token: owner.access_token });
    unavailable(raw, raw.json);
    expect(raw.json).toMatchObject({ error: 'service_unavailable', code: 'PGRST000', details: {} });
    expect(raw.json.message).toMatch(/try again/);
  });

  it('/auth/v1 answers 503 in GoTrue’s shape; auth-js sees a retryable error', async () => {
    const r = await call(svc, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email: owner.user.email, password: 'password-8' },
    });
    unavailable(r, r.json);
    expect(r.json).toMatchObject({
      error: 'service_unavailable',
      code: 'service_unavailable',
      error_code: 'service_unavailable',
      msg: expect.stringMatching(/try again/),
    });
    const auth = new AuthClient({
      url: `${svc.url}/auth/v1`,
      headers: { apikey: svc.anonKey },
      persistSession: false,
    });
    const { error } = await auth.getUser(owner.access_token);
    expect(error?.status).toBe(503);
    expect(error?.name).toBe('AuthRetryableFetchError');
  });

  it('functions answer 503, reads and writes alike', async () => {
    const list = await call(svc, 'GET', '/functions/v1/conversations', { token: owner.access_token });
    unavailable(list, list.json);
    expect(list.json).toEqual({ error: 'service_unavailable', message: expect.any(String), details: {} });
    const order = await call(svc, 'POST', '/functions/v1/orders', {
      token: owner.access_token,
      body: { address: '1 Main St', phone_number: '+14155550100', items: [{ name: 'Tea', quantity: 1 }] },
    });
    unavailable(order, order.json);
    const exchange = await call(svc, 'POST', '/functions/v1/agent-auth', { body: { api_key: 'svc_ak_x' } });
    unavailable(exchange, exchange.json);
  });

  it('the MCP endpoint answers 503 with a JSON-RPC error carrying the same body, in a tool call and before one', async () => {
    const calls = [
      [warm, { name: 'svc_list_contacts', arguments: {} }],
      [cold, { name: 'svc_list_contacts', arguments: {} }],
    ] as const;
    for (const [token, params] of calls) {
      const r = await rpcPost(svc, token, { jsonrpc: '2.0', id: 7, method: 'tools/call', params });
      const body = (await r.json()) as {
        id: number;
        error: { code: number; message: string; data: unknown };
      };
      unavailable(r, body);
      expect(body).toMatchObject({
        id: 7,
        error: { code: -32603, data: { error: 'service_unavailable', details: {} } },
      });
    }
    const read = await rpcPost(svc, warm, {
      jsonrpc: '2.0',
      id: 8,
      method: 'resources/read',
      params: { uri: 'svc://organization/info' },
    });
    const body = (await read.json()) as { error: { data: { error: string } } };
    unavailable(read, body);
    expect(body.error.data.error).toBe('service_unavailable');
  });

  it('webhook receivers answer 503, so Meta and Shopify deliver again', async () => {
    const meta = await deliverInbound();
    unavailable(meta, meta.json);
    // (deliverShopify gives no headers: Retry-After is checked on the other two, the same path.)
    const shop = await deliverShopify(svc, shopifyOrder({ id: '820982911946154500' }));
    expect(shop).toMatchObject({ status: 503, json: { error: 'service_unavailable' } });
    const internal = await fetch(`${svc.url}/functions/v1/internal-webhook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        organization_id: crypto.randomUUID(),
        type: 'order.status',
        data: { order_number: 'ORD-000001', status: 'confirmed' },
      }),
    });
    unavailable(internal, await internal.json());
  });

  it('/health answers 503', async () => {
    const r = await call(svc, 'GET', '/health');
    unavailable(r, r.json);
  });

  it('once the database is back, the same process serves every surface again', async () => {
    cluster.start();
    const rest = await call(svc, 'GET', '/rest/v1/contacts?select=id', { token: owner.access_token });
    expect(rest.status).toBe(200);
    const write = await call(svc, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      body: { first_name: 'Back' },
      headers: { prefer: 'return=representation' },
    });
    expect(write.status).toBe(201);
    expect((await call(svc, 'GET', '/health')).status).toBe(200);
    const signIn = await call(svc, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email: owner.user.email, password: 'password-8' },
    });
    expect(signIn.status).toBe(200);
    const tool = await rpcPost(svc, cold, {
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'svc_list_contacts', arguments: {} },
    });
    expect(tool.status).toBe(200);
    const meta = await deliverInbound();
    expect(meta.status).toBe(200);
  });
});
