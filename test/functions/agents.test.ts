import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../src/platform/db/database.ts';
import { call, inviteAndAccept, orgOf, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  // Per-address limits have their own tests (limits.test.ts); here every call comes from 127.0.0.1.
  svc = await startTestService({
    RATE_LIMIT_AGENT_AUTH_PER_MINUTE: '1000',
    AGENT_REGISTER_PER_IP_PER_HOUR: '1000',
  });
});
afterAll(() => svc?.stop());

const fn = (name: string) => `/functions/v1/${name}`;
const FREE_LIMITS = {
  contacts: 50,
  orders: 25,
  inventory_items: 30,
  outbound_messages: 0,
  api_calls_per_day: 500,
  warehouses: 1,
  ai_annotations: 0,
  agents: 1,
  mcp_scopes: ['read'],
  data_retention_days: 30,
};

const register = (body: Record<string, unknown> = {}) =>
  call(svc, 'POST', fn('agent-register'), {
    body: {
      agent_name: 'Ops bot',
      agent_platform: 'claude',
      owner_email: uniqueEmail('owner'),
      organization_name: 'Bot Shop',
      plan: 'free',
      ...body,
    },
  });
const exchange = (apiKey: string) => call(svc, 'POST', fn('agent-auth'), { body: { api_key: apiKey } });
const revokeAll = (orgId: string) =>
  svc.services.db.asPrincipal(SERVICE, (tx) =>
    tx.query('update agent_api_keys set is_active = false where organization_id = $1', [orgId]),
  );

describe('self-registration → exchange → claims → usage', () => {
  it('registers a free organization and a key, exchanges it for an agent JWT, and reports usage', async () => {
    const reg = await register();
    expect(reg.status).toBe(201);
    expect(Object.keys(reg.json).sort()).toEqual(
      [
        'api_key',
        'api_key_expires_at',
        'auth_endpoint',
        'mcp_endpoint',
        'message',
        'organization_id',
        'plan',
        'plan_limits',
        'success',
      ].sort(),
    );
    expect(reg.json).toMatchObject({
      success: true,
      plan: 'free',
      plan_limits: FREE_LIMITS,
      mcp_endpoint: `${svc.url}/functions/v1/mcp-server`,
      auth_endpoint: `${svc.url}/functions/v1/agent-auth`,
    });
    expect(reg.json.api_key).toMatch(/^svc_ak_[A-Za-z0-9]{48}$/);
    expect(reg.json.api_key_expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(reg.json.message).toMatch(/cannot be shown again/);

    const ex = await exchange(reg.json.api_key);
    expect(ex.status).toBe(200);
    expect(ex.json).toMatchObject({ expires_in: 3600, organization_id: reg.json.organization_id });
    expect(Object.keys(ex.json).sort()).toEqual(['access_token', 'expires_in', 'organization_id']);
    const claims = decodeJwt(ex.json.access_token);
    // Spec 2.5's claims, plus the registered JWT claims and nothing else.
    expect(Object.keys(claims).sort()).toEqual(
      [
        'agent_scopes',
        'app_metadata',
        'aud',
        'exp',
        'iat',
        'iss',
        'org_role',
        'organization_id',
        'role',
        'sub',
      ].sort(),
    );
    expect(claims).toMatchObject({
      role: 'authenticated',
      organization_id: reg.json.organization_id,
      org_role: 'agent',
      agent_scopes: ['read'],
      app_metadata: { organization_id: reg.json.organization_id, org_role: 'agent', agent_scopes: ['read'] },
    });
    expect((claims.exp as number) - (claims.iat as number)).toBeLessThanOrEqual(3600);

    const usage = await call(svc, 'GET', fn('agent-usage'), { token: ex.json.access_token });
    expect(usage.status).toBe(200);
    expect(usage.json.plan).toEqual({ slug: 'free', name: 'Free', price_usd: 0 });
    expect(Object.keys(usage.json.usage).sort()).toEqual(
      [
        'agents',
        'ai_annotations',
        'api_calls_per_day',
        'contacts',
        'inventory_items',
        'orders',
        'outbound_messages',
        'warehouses',
      ].sort(),
    );
    expect(usage.json.usage.agents).toEqual({
      used: 1,
      limit: 1,
      remaining: 0,
      percent: 100,
      period: 'total',
    });
    expect(usage.json.usage.contacts).toMatchObject({ used: 0, limit: 50, remaining: 50, period: 'total' });
    expect(usage.json.usage.orders.period).toBe('month');
    expect(usage.json.usage.api_calls_per_day).toMatchObject({ used: 1, limit: 500, period: 'day' });
    // The one warehouse the service created with the organization is no reason to warn.
    expect(usage.json.usage.warehouses).toMatchObject({ used: 1, limit: 1 });
    expect(usage.json.warnings.map((w: { resource: string }) => w.resource)).toEqual(['agents']);
    expect(usage.json.upgrade.recommended_plan).toBe('starter');
    expect(Date.parse(usage.json.generated_at)).not.toBeNaN();
  });

  it('refuses paid plans, missing fields, a bad email and a long platform label', async () => {
    const paid = await register({ plan: 'growth' });
    expect(paid.status).toBe(400);
    expect(paid.json.message).toMatch(/person must upgrade/);
    for (const bad of [
      { agent_name: undefined },
      { owner_email: 'not-an-email' },
      { organization_name: '' },
      {
        agent_platform: 'x'.repeat(65),
      },
    ]) {
      const r = await register(bad);
      expect(r.status).toBe(400);
      expect(r.json.error).toBe('validation_error');
    }
  });

  it('limits registrations to 3 per owner email per day', async () => {
    const owner_email = uniqueEmail('busy');
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await register({ owner_email })).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
  });
});

describe('agent-auth refusals', () => {
  it('answers unknown, malformed and wrong keys with invalid_api_key, and logs every attempt', async () => {
    const reg = await register();
    const key: string = reg.json.api_key;
    const wrongSecret = `${key.slice(0, 12)}${'A'.repeat(43)}`;
    for (const bad of [`svc_ak_${'Z'.repeat(48)}`, 'not-a-key', wrongSecret, '']) {
      const r = await exchange(bad);
      expect(r.status).toBe(401);
      expect(r.json.error).toBe('invalid_api_key');
    }
    const attempts = await svc.services.db.query<{ key_prefix: string | null; ip: string; reason: string }>(
      `select key_prefix, ip, reason from agent_auth_attempts
        where reason <> 'ok' and created_at > now() - interval '1 minute' order by id desc limit 4`,
    );
    expect(attempts.map((a) => a.reason).reverse()).toEqual([
      'unknown_key',
      'malformed',
      'wrong_secret',
      'malformed',
    ]);
    expect(attempts.every((a) => ['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(a.ip))).toBe(true);
    expect(attempts.find((a) => a.reason === 'wrong_secret')?.key_prefix).toBe(key.slice(0, 12));
    expect((await exchange(key)).status).toBe(200);
    const [ok] = await svc.services.db.query<{ reason: string }>(
      "select reason from agent_auth_attempts where outcome = 'success' order by id desc limit 1",
    );
    expect(ok?.reason).toBe('ok');
    // The secret part of a key is in no table.
    const secret = key.slice(12);
    for (const table of ['agent_auth_attempts', 'agent_api_keys']) {
      const rows = await svc.services.db.query(`select * from ${table}`);
      expect(JSON.stringify(rows)).not.toContain(secret);
    }
  });

  it('says revoked or expired only to a caller holding the real key; a revoked key’s live JWT stops working', async () => {
    const reg = await register();
    const live = (await exchange(reg.json.api_key)).json.access_token;
    expect((await call(svc, 'GET', fn('agent-usage'), { token: live })).status).toBe(200);

    await revokeAll(reg.json.organization_id);
    const revoked = await exchange(reg.json.api_key);
    expect(revoked.status).toBe(401);
    expect(revoked.json.error).toBe('api_key_revoked');
    const afterRevoke = await call(svc, 'GET', fn('agent-usage'), { token: live });
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.json.message).toMatch(/call agent-auth again/);

    const other = await register();
    await svc.services.db.query(
      "update agent_api_keys set expires_at = now() - interval '1 minute' where organization_id = $1",
      [other.json.organization_id],
    );
    const expired = await exchange(other.json.api_key);
    expect(expired.status).toBe(401);
    expect(expired.json.error).toBe('api_key_expired');
    const wrong = await exchange(`${other.json.api_key.slice(0, 12)}${'b'.repeat(43)}`);
    expect(wrong.json.error).toBe('invalid_api_key');
  });

  it('never issues a token that outlives its key', async () => {
    const reg = await register();
    await svc.services.db.query(
      "update agent_api_keys set expires_at = now() + interval '10 minutes' where organization_id = $1",
      [reg.json.organization_id],
    );
    const ex = await exchange(reg.json.api_key);
    expect(ex.json.expires_in).toBeLessThanOrEqual(600);
    expect(ex.json.expires_in).toBeGreaterThan(590);
  });
});

describe('keys created by people', () => {
  it('owners and admins create and list keys; members and agents are refused; the plan caps agents', async () => {
    const owner = await signUp(svc, 'Key Holder Ltd');
    const create = (token: string, body: Record<string, unknown>) =>
      call(svc, 'POST', fn('agent-api-key-create'), { token, body });

    const made = await create(owner.access_token, {
      name: 'warehouse bot',
      scopes: ['read', 'write', 'admin'],
    });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({
      organization_id: orgOf(owner),
      name: 'warehouse bot',
      scopes: ['read', 'write', 'admin'],
    });
    expect(made.json.key_prefix).toBe(made.json.api_key.slice(0, 12));
    expect(Date.parse(made.json.expires_at) - Date.now()).toBeGreaterThan(89 * 24 * 3600 * 1000);

    // Free plan: the key asked for admin, the plan grants read.
    const ex = await exchange(made.json.api_key);
    expect(decodeJwt(ex.json.access_token).agent_scopes).toEqual(['read']);

    const second = await create(owner.access_token, { name: 'second', scopes: ['read'] });
    expect(second.status).toBe(403);
    expect(second.json).toMatchObject({
      error: 'plan_limit_exceeded',
      details: { resource: 'agents', limit: 1, used: 1, plan: 'free' },
    });

    const list = await call(svc, 'GET', fn('agent-api-keys'), { token: owner.access_token });
    expect(list.status).toBe(200);
    expect(list.json.pagination).toEqual({ page: 1, per_page: 25, total: 1, total_pages: 1 });
    expect(list.json.data[0]).toMatchObject({
      name: 'warehouse bot',
      is_active: true,
      key_prefix: made.json.key_prefix,
    });
    expect(list.json.data[0].last_used_at).not.toBeNull();
    expect(JSON.stringify(list.json)).not.toContain(made.json.api_key);
    expect(list.json.data[0]).not.toHaveProperty('key_hash');

    // Growth: the same key now exchanges for every scope it asked for.
    await call(svc, 'POST', fn('organization-plan'), {
      token: svc.serviceRoleKey,
      body: { organization_id: orgOf(owner), plan: 'growth' },
    });
    expect(decodeJwt((await exchange(made.json.api_key)).json.access_token).agent_scopes).toEqual([
      'read',
      'write',
      'admin',
    ]);

    const member = await signUp(svc);
    const asMember = await inviteAndAccept(svc, owner, member, 'member');
    expect((await create(asMember, { name: 'sneaky', scopes: ['read'] })).status).toBe(403);
    expect((await call(svc, 'GET', fn('agent-api-keys'), { token: asMember })).status).toBe(403);
    expect((await call(svc, 'GET', fn('agent-usage'), { token: asMember })).status).toBe(403);
    expect((await create(ex.json.access_token, { name: 'agent-made', scopes: ['read'] })).status).toBe(403);
  });

  it('validates scopes and expiry', async () => {
    const owner = await signUp(svc, 'Picky Ltd');
    const create = (body: Record<string, unknown>) =>
      call(svc, 'POST', fn('agent-api-key-create'), {
        token: owner.access_token,
        body: { name: 'k', ...body },
      });
    const day = 24 * 3600 * 1000;
    for (const body of [
      { scopes: [] },
      { scopes: ['superuser'] },
      { scopes: ['read', 'read'] },
      { scopes: ['read'], expires_at: new Date(Date.now() - 1000).toISOString() },
      { scopes: ['read'], expires_at: new Date(Date.now() + 366 * day).toISOString() },
      { scopes: ['read'], expires_at: 'tomorrow' },
      { scopes: ['read'], expires_at: '2099-01-01' },
      { scopes: ['read'], expires_at: new Date(Date.now() + 30 * day).toISOString().replace('Z', '') },
    ]) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    const ok = await create({ scopes: ['write'], expires_at: new Date(Date.now() + 30 * day).toISOString() });
    expect(ok.status).toBe(201);
  });
});

describe('secrets', () => {
  it('raw keys appear in no log line and in no response after creation', async () => {
    const reg = await register();
    await exchange(reg.json.api_key);
    await exchange(`${reg.json.api_key.slice(0, 12)}${'Q'.repeat(43)}`);
    const usage = await call(svc, 'GET', fn('agent-usage'), {
      token: (await exchange(reg.json.api_key)).json.access_token,
    });
    expect(JSON.stringify(usage.json)).not.toContain(reg.json.api_key);
    expect(svc.logs()).not.toContain(reg.json.api_key);
    expect(svc.logs()).not.toContain(reg.json.api_key.slice(12));
  });
});

describe('effective scopes: what the plan grants a key today', () => {
  it('shows them beside the asked scopes with a warning, and a refusal the plan causes names the plan to move to', async () => {
    const owner = await signUp(svc, 'Free Writer Ltd');
    const made = await call(svc, 'POST', fn('agent-api-key-create'), {
      token: owner.access_token,
      body: { name: 'writer', scopes: ['read', 'write'] },
    });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ scopes: ['read', 'write'], effective_scopes: ['read'] });
    expect(made.json.warning).toMatch(/Free plan gives agents only read/);
    expect(made.json.warning).toMatch(/write scope takes effect .*Starter plan/);
    const listed = async () =>
      (await call(svc, 'GET', fn('agent-api-keys'), { token: owner.access_token })).json.data[0];
    expect(await listed()).toMatchObject({
      scopes: ['read', 'write'],
      effective_scopes: ['read'],
      warning: made.json.warning,
    });

    const token = (await exchange(made.json.api_key)).json.access_token;
    const rest = await call(svc, 'POST', '/rest/v1/contacts', { token, body: { first_name: 'x' } });
    expect(rest.status).toBe(403);
    expect(rest.json).toMatchObject({
      error: 'insufficient_scope',
      details: { required_scope: 'write', granted_scopes: ['read'], plan: 'free', minimum_plan: 'starter' },
    });
    expect(rest.json.message).toMatch(/Free plan does not give agents: an owner .* Starter plan/);
    const client = await mcpClient(svc, token);
    try {
      const viaMcp = await tool(client, 'svc_create_contact', { first_name: 'x' });
      expect(viaMcp.isError).toBe(true);
      expect(viaMcp.body).toMatchObject({
        error: 'insufficient_scope',
        details: { required_scope: 'write', plan: 'free', minimum_plan: 'starter' },
      });
    } finally {
      await client.close();
    }

    await setPlan(svc, owner, 'growth');
    expect(await listed()).toMatchObject({ effective_scopes: ['read', 'write'], warning: null });
    // A token issued before the upgrade: the plan is not the cause any more, the token's age is.
    const stale = await call(svc, 'POST', '/rest/v1/contacts', { token, body: { first_name: 'x' } });
    expect(stale.json.error).toBe('insufficient_scope');
    expect(stale.json.details).not.toHaveProperty('minimum_plan');
    expect(stale.json.message).toMatch(/call agent-auth again/);
    const fresh = (await exchange(made.json.api_key)).json.access_token;
    const write = await call(svc, 'POST', '/rest/v1/contacts', { token: fresh, body: { first_name: 'x' } });
    expect(write.status).toBe(201);
    // The key is the cause: a person creates a key with the scope; no plan is named.
    const reader = await agentToken(svc, owner, ['read']);
    const byKey = await call(svc, 'POST', '/rest/v1/contacts', {
      token: reader.token,
      body: { first_name: 'x' },
    });
    expect(byKey.json.error).toBe('insufficient_scope');
    expect(byKey.json.details).not.toHaveProperty('minimum_plan');
    expect(byKey.json.message).toMatch(/this key does not have it/);
  });
});
