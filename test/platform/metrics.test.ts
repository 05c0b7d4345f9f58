import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MakeJob } from '../../src/jobs/deps.ts';
import { call, orgOf, signUp } from '../helpers/http.ts';
import { agentToken, rpcPost } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// GET /metrics (src/platform/metrics, docs/operations.md "Metrics"): what an operator's Prometheus
// reads. Only a scraper with METRICS_TOKEN reads it on the public port; after known traffic the
// request counts are exact per route template, and no id a caller sent becomes a label; the queue
// gauges show jobs waiting.

const TOKEN = 'metrics-token-for-tests-0123456789';
const PROBE = 'metrics-probe';

/** A job this test enqueues and no worker runs (WORKER=off): it waits in the queue. */
const probeJob: MakeJob = () => ({
  name: PROBE,
  policy: { attempts: 1, backoffSeconds: 1, maxBackoffSeconds: 1, maxAgeSeconds: 3600, leaseSeconds: 60 },
  run: async () => ({ status: 'done' }),
});

type Sample = { name: string; labels: Record<string, string>; value: number };

/** Prometheus' text format, one sample a line (comments skipped). */
function parse(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m) throw new Error(`not a sample line: ${l}`);
      const labels: Record<string, string> = {};
      for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
        labels[k as string] = v as string;
      return { name: m[1] as string, labels, value: Number(m[3]) };
    });
}

/** The one sample of `name` whose labels are exactly `labels`; 0 when there is none. */
function value(samples: Sample[], name: string, labels: Record<string, string>): number {
  const found = samples.filter(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

const requests = (samples: Sample[], route: string, target: string, method: string, status: number) =>
  value(samples, 'svc_http_request_duration_seconds_count', {
    route,
    target,
    method,
    status: String(status),
  });

async function scrape(svc: TestService): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parse(text) };
}

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService(
    { METRICS_TOKEN: TOKEN, METRICS_PORT: '0', WORKER: 'off', RATE_LIMIT_AGENT_AUTH_PER_MINUTE: '2' },
    { jobs: [probeJob] },
  );
});
afterAll(() => svc?.stop());

describe('GET /metrics on the public port', () => {
  it('is refused without the token and with another one', async () => {
    const none = await fetch(`${svc.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await none.json()).toMatchObject({ error: 'unauthorized', details: {} });
    const wrong = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    const anon = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${svc.anonKey}` } });
    expect(anon.status).toBe(401);
    expect(await anon.text()).not.toContain('svc_http_request_duration_seconds');
  });

  it('does not exist when METRICS_TOKEN is not set', async () => {
    const plain = await startTestService();
    try {
      const res = await fetch(`${plain.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(404);
      expect(plain.metricsUrl).toBeUndefined();
    } finally {
      await plain.stop();
    }
  });
});

describe('after known traffic', () => {
  it('counts requests exactly by route template, target, method and status, and never labels an id', async () => {
    const owner = await signUp(svc, 'Metrics Co');
    const token = owner.access_token;
    const created = await call(svc, 'POST', '/rest/v1/contacts', {
      token,
      body: { first_name: 'Ada', last_name: 'Metrics', email: 'ada-metrics@example.test' },
      headers: { prefer: 'return=representation' },
    });
    expect(created.status).toBe(201);
    const contactId = created.json[0].id as string;
    const before = (await scrape(svc)).samples;

    for (let i = 0; i < 3; i++) {
      const r = await call(svc, 'GET', `/rest/v1/contacts?id=eq.${contactId}`, { token });
      expect(r.status).toBe(200);
      expect(r.json).toHaveLength(1);
    }
    // Names a caller makes up, and ids in paths: one label value each, never the name or id.
    expect((await call(svc, 'GET', `/rest/v1/table_${contactId.slice(0, 8)}`, { token })).status).toBe(404);
    expect((await call(svc, 'GET', `/rest/v1/contacts/${contactId}`, { token })).status).toBe(404);
    expect((await call(svc, 'GET', `/functions/v1/fn-${contactId}`, { token })).status).toBe(404);
    expect((await call(svc, 'GET', `/no/such/${contactId}`)).status).toBe(404);

    const agent = await agentToken(svc, owner, ['read']);
    const usage = await call(svc, 'GET', '/functions/v1/agent-usage', { token: agent.token });
    expect(usage.status).toBe(200);
    const tool = await rpcPost(svc, agent.token, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'svc_get_contact', arguments: { contact_id: contactId } },
    });
    expect(tool.status).toBe(200);
    expect(JSON.stringify(await tool.json())).toContain('ada-metrics@example.test');
    const unknownTool = await rpcPost(svc, agent.token, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: `tool_${contactId}`, arguments: {} },
    });
    expect(unknownTool.status).toBe(200);

    // RATE_LIMIT_AGENT_AUTH_PER_MINUTE=2 and agentToken used one: the third exchange is refused.
    const exchanges = [];
    for (let i = 0; i < 2; i++)
      exchanges.push(
        (await call(svc, 'POST', '/functions/v1/agent-auth', { body: { api_key: agent.apiKey } })).status,
      );
    expect(exchanges).toEqual([200, 429]);

    const { text, samples } = await scrape(svc);
    const added = (route: string, target: string, method: string, status: number) =>
      requests(samples, route, target, method, status) - requests(before, route, target, method, status);
    expect(added('/rest/v1/:table', 'contacts', 'GET', 200)).toBe(3);
    expect(added('/rest/v1/:table', 'other', 'GET', 404)).toBe(1);
    expect(added('unmatched', '', 'GET', 404)).toBe(2);
    expect(added('/functions/v1/:name', 'other', 'GET', 404)).toBe(1);
    expect(added('/functions/v1/:name', 'agent-usage', 'GET', 200)).toBe(1);
    expect(added('/functions/v1/:name', 'agent-auth', 'POST', 200)).toBe(2);
    expect(added('/functions/v1/:name', 'agent-auth', 'POST', 429)).toBe(1);
    expect(added('/functions/v1/mcp-server', 'svc_get_contact', 'POST', 200)).toBe(1);
    expect(added('/functions/v1/mcp-server', 'other', 'POST', 200)).toBe(1);
    expect(value(samples, 'svc_refusals_total', { limit: 'agent-auth-ip' })).toBe(1);
    // The histogram is whole: +Inf holds every request its count does, and the sum is a duration.
    const inf = value(samples, 'svc_http_request_duration_seconds_bucket', {
      route: '/rest/v1/:table',
      target: 'contacts',
      method: 'GET',
      status: '200',
      le: '+Inf',
    });
    expect(inf).toBe(requests(samples, '/rest/v1/:table', 'contacts', 'GET', 200));
    expect(
      value(samples, 'svc_http_request_duration_seconds_sum', {
        route: '/rest/v1/:table',
        target: 'contacts',
        method: 'GET',
        status: '200',
      }),
    ).toBeGreaterThan(0);

    for (const id of [contactId, orgOf(owner), owner.user.id, contactId.slice(0, 8)])
      expect(text).not.toContain(id);
    for (const s of samples) {
      expect(s.labels.route ?? '').not.toMatch(/[0-9a-f]{8}-/);
      expect(s.labels.target ?? '').not.toMatch(/[0-9a-f]{8}/);
    }
    // The process's own metrics are there too (prom-client's defaults).
    expect(samples.some((s) => s.name === 'process_resident_memory_bytes')).toBe(true);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('shows jobs waiting per job name, and how long the oldest has waited', async () => {
    const { db, queue } = svc.services;
    await db.transaction(async (tx) => {
      for (let i = 0; i < 3; i++) await queue.enqueue(tx, PROBE, { n: i });
      await queue.enqueue(tx, PROBE, { n: 'later' }, { startAfter: 3600 });
    });
    await new Promise((r) => setTimeout(r, 50));
    const { samples } = await scrape(svc);
    expect(value(samples, 'svc_queue_jobs', { name: PROBE, state: 'queued' })).toBe(3);
    expect(value(samples, 'svc_queue_jobs', { name: PROBE, state: 'deferred' })).toBe(1);
    expect(value(samples, 'svc_queue_jobs', { name: PROBE, state: 'active' })).toBe(0);
    const age = value(samples, 'svc_queue_oldest_job_age_seconds', { name: PROBE });
    expect(age).toBeGreaterThan(0);
    expect(age).toBeLessThan(600);
    // Every registered job name is there, at zero when nothing waits.
    expect(samples.some((s) => s.name === 'svc_queue_jobs' && s.labels.name === 'send-message')).toBe(true);
  });

  it('shows the database pool on PostgreSQL', async ({ skip }) => {
    if (!svc.databaseUrl) skip();
    await call(svc, 'GET', '/health');
    const { samples } = await scrape(svc);
    expect(value(samples, 'svc_db_pool_connections', { state: 'max' })).toBe(10);
    expect(value(samples, 'svc_db_pool_connections', { state: 'open' })).toBeGreaterThan(0);
    // Behind a transaction-mode pooler (.ci/run's pooler pass) there are no shared read lanes.
    const lanes = process.env.DATABASE_POOL_MODE === 'transaction' ? 0 : 1;
    expect(value(samples, 'svc_db_read_lanes', { state: 'max' })).toBe(lanes);
  });
});

describe('METRICS_PORT', () => {
  it('serves the same metrics without a token, and nothing else', async () => {
    expect(svc.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${svc.metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('svc_http_request_duration_seconds_bucket');
    const other = await fetch(`${svc.metricsUrl}/rest/v1/contacts`);
    expect(other.status).toBe(404);
  });
});
