// What this file protects (issue 26, section 4): from the moment `svc start` opens its port,
// every request gets a real answer. The port opens before the app is built (an ephemeral port is
// part of its public URL); requests used to be refused in between, 503 with an empty body and no
// Retry-After, for 0.6–0.7 s of every start. Now they wait for the app, a moment, and are
// answered. On the embedded database and on PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { spawnUntil } from '../helpers/cli.ts';
import { freshDatabase, onPostgres } from '../helpers/db.ts';
import { freePort } from '../helpers/pg-cluster.ts';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

type Outcome = { status: number; body: string } | { refused: true };

/** GET /health on a connection of its own. */
const health = (port: number) =>
  new Promise<Outcome>((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve({ refused: true }));
  });

it('answers every request that reaches it while it starts', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-start-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const env: Record<string, string> = { DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'warn' };
  if (onPostgres()) {
    const fresh = await freshDatabase();
    await fresh.db.close();
    cleanups.push(() => fresh.drop());
    env.DATABASE_URL = fresh.url as string;
  }
  let started = false;
  const starting = spawnUntil(['start'], env, /svc listening on/, { cli: true }).then((s) => {
    started = true;
    cleanups.push(() => s.child.kill('SIGKILL'));
  });
  // Requests from before the port opens until the service says it is listening, one after another.
  const beforeReady: Promise<Outcome>[] = [];
  while (!started) {
    const outcome = health(port);
    beforeReady.push(outcome);
    await Promise.race([outcome, starting]);
  }
  await starting;
  const answered = (await Promise.all(beforeReady)).filter(
    (o): o is { status: number; body: string } => !('refused' in o),
  );
  // Some reached the port before the service was ready: the window this test is about.
  expect(answered.length).toBeGreaterThan(0);
  for (const a of answered) expect(a).toMatchObject({ status: 200, body: expect.stringContaining('"ok"') });
});
