import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { addressKey, clientIp, trustedProxies } from '../../src/platform/http/client-ip.ts';
import { startCli } from '../helpers/cli.ts';
import { freshDatabase, onPostgres } from '../helpers/db.ts';
import { call, orgOf, signUp } from '../helpers/http.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

const fn = (name: string) => `/functions/v1/${name}`;
const services: TestService[] = [];
const start = async (env: Record<string, string> = {}, opts: Parameters<typeof startTestService>[1] = {}) => {
  const s = await startTestService(env, opts);
  services.push(s);
  return s;
};
afterAll(async () => {
  for (const s of services) await s.stop();
});

const exchange = (svc: TestService, headers: Record<string, string> = {}) =>
  call(svc, 'POST', fn('agent-auth'), { body: { api_key: `svc_ak_${'x'.repeat(48)}` }, headers });

async function untilLimited(send: () => Promise<{ status: number }>, max: number) {
  const statuses: number[] = [];
  for (let i = 0; i < max; i++) {
    const { status } = await send();
    statuses.push(status);
    if (status === 429) break;
  }
  return statuses;
}

describe('per-address limits (spec section 8)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await start();
  });

  it('agent-auth: 10 attempts a minute, then 429 with Retry-After, and the refusal is logged', async () => {
    const statuses = await untilLimited(() => exchange(svc), 12);
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    const limited = await exchange(svc, { 'x-forwarded-for': '198.51.100.7' });
    expect(limited.status).toBe(429); // X-Forwarded-For is not believed without TRUST_PROXY
    const wait = Number(limited.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(limited.json).toMatchObject({
      error: 'rate_limit_exceeded',
      details: { retry_after_seconds: wait },
    });
    expect(limited.json.message).toContain(`${wait} seconds`);
    const [row] = await svc.services.db.query<{ n: number }>(
      "select count(*)::int as n from agent_auth_attempts where outcome = 'rate_limited'",
    );
    expect(row?.n).toBe(2);
  });

  it('agent-register: 10 an hour from one address', async () => {
    const register = () =>
      call(svc, 'POST', fn('agent-register'), {
        body: { agent_name: 'a', owner_email: uniqueEmail(), organization_name: 'o', plan: 'free' },
      });
    const statuses = await untilLimited(register, 12);
    expect(statuses).toEqual([...Array(10).fill(201), 429]);
  });
});

describe('per-caller limits', () => {
  let svc: TestService;
  beforeAll(async () => {
    // A fixed clock: the quota counts per UTC day, and a run across midnight would start afresh.
    const noon = new Date('2026-06-15T12:00:00Z');
    svc = await start({}, { now: () => noon });
  });

  it('standard: 100 requests a minute per user per organization', async () => {
    const me = await signUp(svc, 'Chatty Ltd');
    const statuses = await untilLimited(
      () => call(svc, 'GET', fn('organization-members'), { token: me.access_token }),
      102,
    );
    expect(statuses.length).toBe(101);
    expect(statuses.slice(0, 100).every((s) => s === 200)).toBe(true);
    expect(statuses[100]).toBe(429);
    // Another user of the same service is not affected.
    const other = await signUp(svc, 'Quiet Ltd');
    expect((await call(svc, 'GET', fn('organization-members'), { token: other.access_token })).status).toBe(
      200,
    );
  });

  it('bulk: 20 multi-row writes a minute', async () => {
    const me = await signUp(svc, 'Bulky Ltd');
    const bulk = () =>
      call(svc, 'POST', fn('organization-create'), {
        token: me.access_token,
        body: [{ name: 'a' }, { name: 'b' }],
      });
    const statuses = await untilLimited(bulk, 22);
    expect(statuses).toEqual([...Array(20).fill(400), 429]);
    expect((await bulk()).json.message).toMatch(/bulk operations/);
  });

  it('counts signed-in /auth/v1 requests too', async () => {
    const me = await signUp(svc, 'Counted Ltd');
    for (let i = 0; i < 3; i++) await call(svc, 'GET', '/auth/v1/user', { token: me.access_token });
    expect((await call(svc, 'GET', fn('organization-members'), { token: me.access_token })).status).toBe(200);
    const key = await call(svc, 'POST', fn('agent-api-key-create'), {
      token: me.access_token,
      body: { name: 'k', scopes: ['read'] },
    });
    const agent = await call(svc, 'POST', fn('agent-auth'), { body: { api_key: key.json.api_key } });
    const usage = await call(svc, 'GET', fn('agent-usage'), { token: agent.json.access_token });
    // 3 × /auth/v1/user, organization-members, agent-api-key-create and this agent-usage call.
    expect(usage.json.usage.api_calls_per_day.used).toBe(6);
  });

  it('counts each call once, on every function path', async () => {
    const me = await signUp(svc, 'Counted Once Ltd');
    const used = async () =>
      (await call(svc, 'GET', fn('agent-usage'), { token: me.access_token })).json.usage.api_calls_per_day
        .used;
    const before = await used();
    // Paths registered both bare and with a wildcard below them (Hono's `/x/*` matches `/x` too).
    for (const path of ['conversations', `conversations/${crypto.randomUUID()}/messages`, 'connect-shopify'])
      await call(svc, 'GET', fn(path), { token: me.access_token });
    // Three calls, and the first agent-usage call itself.
    expect((await used()) - before).toBe(4);
  });
});

describe('the daily quota, on an injected clock', () => {
  // The quota's day is the UTC day of the service's clock; a fixed clock makes the wait exact
  // instead of "about right" and lets the test cross midnight without waiting for it.
  let clock = new Date('2026-03-31T23:59:30.250Z');
  let svc: TestService;
  beforeAll(async () => {
    svc = await start({}, { now: () => clock });
    // This service's database is private to this file: make the free quota small.
    await svc.services.db.query("update plans set api_calls_per_day = 3 where slug = 'free'");
  });

  it('past the plan’s quota, 429 quota_exceeded with Retry-After in seconds to the next UTC midnight', async () => {
    const me = await signUp(svc, 'Thrifty Ltd');
    const members = () => call(svc, 'GET', fn('organization-members'), { token: me.access_token });
    expect(await untilLimited(members, 5)).toEqual([200, 200, 200, 429]);
    const over = await members();
    expect(over.json.error).toBe('quota_exceeded');
    expect(over.headers.get('retry-after')).toBe('30'); // 29.75 s, rounded up
    expect(over.json.details).toMatchObject({ limit: 3, resets_at: '2026-04-01T00:00:00.000Z' });
    expect(over.json.message).toContain('resets at midnight UTC, in less than a minute');
  });

  it('/rest/v1 counts every call against the same quota, the refused one included, as the functions do', async () => {
    clock = new Date('2026-03-31T23:59:30.250Z');
    const me = await signUp(svc, 'Restful Ltd');
    const contacts = () => call(svc, 'GET', '/rest/v1/contacts?select=id', { token: me.access_token });
    const members = () => call(svc, 'GET', fn('organization-members'), { token: me.access_token });
    // The same token again and again: after the first call, its checks and counts are answered
    // from memory (knownCaller, meterCallNow), and must count exactly as the first did.
    expect(await untilLimited(contacts, 5)).toEqual([200, 200, 200, 429]);
    const over = await contacts();
    expect(over.json).toMatchObject({ error: 'quota_exceeded', details: { limit: 3, used: 5 } });
    expect(over.headers.get('retry-after')).toBe('30');
    expect((await members()).json).toMatchObject({ error: 'quota_exceeded', details: { used: 6 } });
  });

  it('past the quota, an owner still sees who they are, the organization, its plan and usage, and can reach the upgrade; each such call still counts', async () => {
    clock = new Date('2026-03-31T12:00:00.000Z');
    const me = await signUp(svc, 'Stuck Ltd');
    const contacts = () => call(svc, 'GET', '/rest/v1/contacts?select=id', { token: me.access_token });
    expect(await untilLimited(contacts, 5)).toEqual([200, 200, 200, 429]);
    const token = { token: me.access_token };
    const still = [
      await call(svc, 'GET', '/auth/v1/user', token),
      await call(svc, 'GET', fn('agent-usage'), token),
      await call(svc, 'GET', fn('billing'), token),
      await call(svc, 'GET', '/rest/v1/organizations?select=name,plan', token),
      await call(svc, 'GET', '/rest/v1/plans?select=slug', token),
      await call(svc, 'GET', '/rest/v1/organization_members?select=organization_id', token),
    ];
    expect(still.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const usage = (await call(svc, 'GET', fn('agent-usage'), token)).json.usage.api_calls_per_day;
    // 4 contact reads and the 7 calls above, capped at the plan's 3 in what it shows.
    expect(usage).toMatchObject({ used: 3, limit: 3, remaining: 0 });
    // Everything else is still refused, writes to those tables included.
    expect((await contacts()).status).toBe(429);
    expect((await call(svc, 'GET', fn('organization-members'), token)).status).toBe(429);
    expect(
      (
        await call(svc, 'PATCH', `/rest/v1/organizations?id=eq.${orgOf(me)}`, {
          ...token,
          body: { name: 'x' },
        })
      ).status,
    ).toBe(429);
  });

  it('a new UTC day starts a fresh count', async () => {
    clock = new Date('2026-04-01T23:59:59.000Z');
    const me = await signUp(svc, 'Daily Ltd');
    const members = () => call(svc, 'GET', fn('organization-members'), { token: me.access_token });
    expect(await untilLimited(members, 5)).toEqual([200, 200, 200, 429]);
    expect((await members()).headers.get('retry-after')).toBe('1');
    clock = new Date('2026-04-02T00:00:00.000Z');
    expect(await untilLimited(members, 5)).toEqual([200, 200, 200, 429]);
    expect((await members()).headers.get('retry-after')).toBe(String(24 * 3600));
    expect((await members()).json.message).toContain('in 24 hours');
    clock = new Date('2026-04-02T16:17:30.000Z');
    expect((await members()).json.message).toContain('in 7 hours and 43 minutes');
  });
});

describe('TRUST_PROXY', () => {
  it('believes X-Forwarded-For only from the named proxies', async () => {
    const svc = await start({ TRUST_PROXY: '127.0.0.1,::1' });
    const from = (ip: string) => () => exchange(svc, { 'x-forwarded-for': `203.0.113.99, ${ip}` });
    expect(await untilLimited(from('192.0.2.1'), 12)).toEqual([...Array(10).fill(401), 429]);
    expect((await from('192.0.2.2')()).status).toBe(401);
  });

  it('refuses to start with an entry that is not an address', () => {
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.1,proxy.internal' })).toThrow(ConfigError);
  });

  it('takes the rightmost untrusted address', () => {
    const proxies = trustedProxies(['10.0.0.0/8', '127.0.0.1']);
    expect(clientIp('127.0.0.1', '1.1.1.1, 2.2.2.2, 10.1.2.3', proxies)).toBe('2.2.2.2');
    expect(clientIp('::ffff:127.0.0.1', '2.2.2.2', proxies)).toBe('2.2.2.2');
    expect(clientIp('8.8.8.8', '2.2.2.2', proxies)).toBe('8.8.8.8'); // not from a proxy
    expect(clientIp('127.0.0.1', 'garbage', proxies)).toBe('127.0.0.1');
    expect(clientIp('127.0.0.1', '2.2.2.2', null)).toBe('127.0.0.1');
    expect(() => trustedProxies(['not-an-ip'])).toThrow(/TRUST_PROXY/);
    // IPv6 callers are limited by their /64, the block one subscriber usually holds.
    expect(addressKey('2001:db8:aaaa:bbbb:1:2:3:4')).toBe(addressKey('2001:db8:aaaa:bbbb::99'));
    expect(addressKey('2001:db8:aaaa:bbbb::1')).not.toBe(addressKey('2001:db8:aaaa:cccc::1'));
    expect(addressKey('192.0.2.1')).toBe('192.0.2.1');
  });
});

describe('shared counters', () => {
  it('in memory, each process counts for itself', async () => {
    const [a, b] = [await start(), await start()];
    expect(await untilLimited(() => exchange(a), 12)).toEqual([...Array(10).fill(401), 429]);
    expect((await exchange(b)).status).toBe(401);
  });

  it('with Redis unreachable, the service keeps counting in memory instead of refusing everyone', async () => {
    const svc = await start({ REDIS_URL: 'redis://127.0.0.1:9' });
    expect(await untilLimited(() => exchange(svc), 12)).toEqual([...Array(10).fill(401), 429]);
    expect(svc.logs()).toMatch(/redis unavailable; counting in memory/);
  });

  const redisUrl = process.env.TEST_REDIS_URL;
  it.runIf(Boolean(redisUrl))('with Redis, two service processes hold one limit between them', async () => {
    const env = { REDIS_URL: redisUrl as string, REDIS_PREFIX: `test-${randomBytes(6).toString('hex')}` };
    const inProcess = await start(env);
    // The second service is a separate OS process with its own database.
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-redis-'));
    const db = onPostgres() ? await freshDatabase() : undefined;
    await db?.db.close();
    const other = await startCli({
      ...env,
      PORT: '0',
      LOG_LEVEL: 'silent',
      // It answers ten requests: a small pool keeps it within PostgreSQL's connection limit while
      // the other test worker's services hold theirs (a CI run failed with "too many clients").
      DATABASE_POOL_SIZE: '2',
      DATA_DIR: dir,
      ...(db ? { DATABASE_URL: db.url as string } : {}),
    });
    try {
      const viaOther = () =>
        fetch(`${other.url}/functions/v1/agent-auth`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: `svc_ak_${'y'.repeat(48)}` }),
        });
      for (let i = 0; i < 5; i++) expect((await exchange(inProcess)).status).toBe(401);
      for (let i = 0; i < 5; i++) expect((await viaOther()).status).toBe(401);
      expect((await exchange(inProcess)).status).toBe(429);
      expect((await viaOther()).status).toBe(429);
    } finally {
      other.child.kill('SIGTERM');
      await new Promise((r) => other.child.once('exit', r));
      await db?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
