import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DASHBOARD_DIR, dashboardRoutes } from '../../src/dashboard/routes.ts';
import { requireBuiltDashboard } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  requireBuiltDashboard();
  svc = await startTestService();
});
afterAll(() => svc?.stop());

const entryScript = () =>
  readdirSync(new URL('assets/', DASHBOARD_DIR)).find((f) => /^index-.*\.js$/.test(f));

describe('the dashboard as the service serves it', () => {
  test('every app path answers the page, carrying the anon key as data under a strict policy, never cached', async () => {
    for (const path of ['/', '/app', '/app/orders/123', '/invitations']) {
      const res = await fetch(`${svc.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
      expect(res.headers.get('content-security-policy')).not.toMatch(/script-src[^;]*unsafe-inline/);
      const html = await res.text();
      const config = html.match(/<script type="application\/json" id="svc-config">(.*?)<\/script>/)?.[1];
      expect(JSON.parse(config ?? '{}')).toEqual({ anonKey: svc.anonKey });
    }
  });

  test('hashed assets are cached for a year and gzipped for clients that take it', async () => {
    const name = entryScript();
    const plain = await fetch(`${svc.url}/assets/${name}`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('content-encoding')).toBeNull();
    const body = Buffer.from(await plain.arrayBuffer());

    // fetch() would decompress by itself: read the raw bytes over node:http.
    const gz = await new Promise<{ encoding?: string; bytes: Buffer }>((resolve, reject) => {
      request(`${svc.url}/assets/${name}`, { headers: { 'accept-encoding': 'gzip, br' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ encoding: res.headers['content-encoding'], bytes: Buffer.concat(chunks) }),
        );
      })
        .on('error', reject)
        .end();
    });
    expect(gz.encoding).toBe('gzip');
    expect(gz.bytes.length).toBeLessThan(body.length);
    expect(gunzipSync(gz.bytes).equals(body)).toBe(true);
  });

  test('names outside the build are 404 with the error body, never a file elsewhere', async () => {
    for (const path of [
      '/assets/missing-abc.js',
      '/assets/..%2F..%2Fpackage.json',
      '/assets/%2e%2e/index.html',
    ]) {
      const res = await fetch(`${svc.url}${path}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'not_found' });
    }
  });

  test('without a build, the page says how to build it', async () => {
    const app = dashboardRoutes({ anonKey: 'k', dir: new URL('file:///nonexistent-dashboard/') });
    const res = await app.request('/app');
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/npm run build:web/);
  });
});
