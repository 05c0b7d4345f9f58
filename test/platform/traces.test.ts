import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { eventually } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// Traces (src/platform/tracing, docs/operations.md "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT set,
// spans reach an OTLP/HTTP collector, here a local one: a server span per request carrying the
// request id, the database statements under it, and the outside call a send makes.

type Attr = { key: string; value: { stringValue?: string; intValue?: number | string } };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Attr[];
};

const spans: OtlpSpan[] = [];
const services: string[] = [];
let collector: Server;
let svc: TestService;

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};
const SERVER = 2;
const CLIENT = 3;

/** The spans of one trace below `root`, at any depth. */
const below = (root: OtlpSpan) => {
  const found: OtlpSpan[] = [];
  let parents = new Set([root.spanId]);
  while (parents.size) {
    const next = spans.filter((s) => s.traceId === root.traceId && parents.has(s.parentSpanId ?? ''));
    found.push(...next);
    parents = new Set(next.map((s) => s.spanId));
  }
  return found;
};

const serverSpan = (requestId: string) =>
  spans.find((s) => s.kind === SERVER && attr(s, 'svc.request_id') === requestId);

beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.startsWith('application/json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const rs of body.resourceSpans ?? []) {
          for (const a of rs.resource?.attributes ?? [])
            if (a.key === 'service.name') services.push(a.value.stringValue);
          for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans);
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const { port } = collector.address() as AddressInfo;
  svc = await startTestService({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
});
afterAll(async () => {
  await svc?.stop();
  await new Promise((resolve) => collector?.close(resolve));
});

describe('traces', () => {
  it('a request is a server span with its request id, its statements spans under it', async () => {
    const owner = await signUp(svc, 'Traced Co');
    const id = `trace-rest-${process.pid}-0001`;
    const r = await call(svc, 'GET', '/rest/v1/contacts?select=id&limit=5', {
      token: owner.access_token,
      headers: { 'x-request-id': id },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe(id);
    const root = await eventually(() => serverSpan(id));
    expect(root.name).toBe('GET');
    expect(attr(root, 'url.path')).toBe('/rest/v1/contacts');
    expect(attr(root, 'http.response.status_code')).toBe(200);
    expect(root.parentSpanId || undefined).toBeUndefined();
    const statements = await eventually(() => {
      const found = below(root).filter((s) => attr(s, 'db.query.text') !== undefined);
      return found.length ? found : undefined;
    });
    expect(statements.some((s) => String(attr(s, 'db.query.text')).includes('contacts'))).toBe(true);
    expect(services).toContain('svc');
    // The exporter's own posts to the collector are never traced (they would feed themselves).
    const { port } = collector.address() as AddressInfo;
    expect(spans.some((s) => String(attr(s, 'server.address')).endsWith(String(port)))).toBe(false);
    expect(spans.some((s) => attr(s, 'url.path') === '/v1/traces')).toBe(false);
  });

  it('a request without an id gets one, the same in the span and in the answer', async () => {
    const r = await fetch(`${svc.url}/health`);
    expect(r.status).toBe(200);
    const id = r.headers.get('x-request-id') as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const root = await eventually(() => serverSpan(id));
    expect(attr(root, 'url.path')).toBe('/health');
    expect(below(root).some((s) => attr(s, 'db.query.text') === 'select 1')).toBe(true);
  });

  it('an outside call is a client span under the request that made it, with no query string', async () => {
    const owner = await signUp(svc, 'Traced Sender');
    await setPlan(svc, owner, 'starter');
    const account = await call(svc, 'POST', '/functions/v1/connected-accounts', {
      token: owner.access_token,
      body: { provider: 'whatsapp', external_id: `1${process.pid}88`, access_token: 'EAAG-token' },
    });
    expect(account.status).toBe(201);
    const id = `trace-send-${process.pid}-0001`;
    const sent = await call(svc, 'POST', '/functions/v1/whatsapp-send-message', {
      token: owner.access_token,
      body: { to: '+14155550188', template: { name: 'welcome', language: 'en' } },
      headers: { 'x-request-id': id },
    });
    expect(sent.status).toBe(201);
    const root = await eventually(() => serverSpan(id));
    const graphHost = new URL(svc.openGraph?.url as string).host;
    const outside = await eventually(() =>
      below(root).find((s) => s.kind === CLIENT && attr(s, 'server.address') === graphHost),
    );
    expect(outside.name).toBe(`POST ${graphHost}`);
    expect(attr(outside, 'url.path')).toMatch(/\/messages$/);
    expect(attr(outside, 'http.response.status_code')).toBe(200);
    // Nothing the send carried (the token, the number) is in the spans.
    const text = JSON.stringify(below(root));
    expect(text).not.toContain('EAAG-token');
    expect(text).not.toContain('14155550188');
  });
});
