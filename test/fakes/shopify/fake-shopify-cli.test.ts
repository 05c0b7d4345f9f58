// `svc dev fake-shopify`: the fake Shopify as a developer runs it beside the service. It prints
// the SHOPIFY_SHOP_URL to use (never the app's secret), answers a shop's Admin API there in
// Shopify's format, prints one line per request without the token, and stops on SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../../bin/svc.js', import.meta.url));

let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
});

function start(args: string[]) {
  return new Promise<{ shopUrl: string; output: () => string; waitFor: (re: RegExp) => Promise<void> }>(
    (resolve, reject) => {
      const proc = spawn(process.execPath, [BIN, 'dev', 'fake-shopify', ...args]);
      child = proc;
      let out = '';
      const waiters: { re: RegExp; done: () => void }[] = [];
      const take = (d: Buffer) => {
        out += d;
        for (const w of [...waiters]) if (w.re.test(out)) w.done();
        const m = /SHOPIFY_SHOP_URL=(\S+)/.exec(out);
        if (m?.[1])
          resolve({
            shopUrl: m[1],
            output: () => out,
            waitFor: (re) => new Promise((done) => (re.test(out) ? done() : waiters.push({ re, done }))),
          });
      };
      proc.stdout.on('data', take);
      proc.stderr.on('data', take);
      proc.on('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
    },
  );
}

describe('svc dev fake-shopify', () => {
  it('prints its shop URL, answers shop.json for a custom app’s token and 401 otherwise, and logs without the token', async () => {
    const shop = 'cli-shop.myshopify.com';
    const fake = await start([
      '--port',
      '0',
      '--app',
      'cli-key:cli-app-secret',
      '--shop',
      `${shop}=me@cli.test:shpat_cli:whsec`,
    ]);
    expect(fake.shopUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\{shop\}$/);
    expect(fake.output()).not.toContain('cli-app-secret');
    const url = `${fake.shopUrl.replace('{shop}', shop)}/admin/api/2026-10/shop.json`;
    const ok = await fetch(url, { headers: { 'x-shopify-access-token': 'shpat_cli' } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { shop: { myshopify_domain: string } }).shop.myshopify_domain).toBe(shop);
    const refused = await fetch(url, { headers: { 'x-shopify-access-token': 'shpat_wrong' } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({
      errors: '[API] Invalid API key or access token (unrecognized login or wrong password)',
    });
    await fake.waitFor(/GET \/cli-shop\.myshopify\.com\/admin\/api\/2026-10\/shop\.json -> 401/);
    expect(fake.output()).not.toContain('shpat_');
    const exited = new Promise((r) => child?.once('exit', r));
    child?.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
