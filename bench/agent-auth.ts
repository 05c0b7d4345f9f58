// agent-auth's cost must not grow with the number of keys: the key is found by its prefix (a
// unique index) and checked with one bcrypt compare. This measures the exchange with 10 keys in
// the table and again with 10,000, on PGlite and (when reachable) PostgreSQL, and prints the ratio
// (goal ≤ 1.2). A benchmark, not a test: it never exits non-zero because of a figure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadSigningKeys } from '../src/auth/signing-keys.ts';
import { exchangeApiKey } from '../src/domain/agent-auth.ts';
import { createApiKey } from '../src/domain/agent-keys.ts';
import { type Database, SERVICE } from '../src/platform/db/database.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { openPglite } from '../src/platform/db/pglite.ts';
import { createTokens } from '../src/platform/jwt.ts';
import { createPasswords } from '../src/platform/passwords.ts';
import { withScratchDatabase } from './scratch-database.ts';

const ROUNDS = 40;
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Filler keys with distinct prefixes; the ceiling trigger is off for them (they are not real keys). */
async function addFillerKeys(db: Database, orgId: string, from: number, to: number) {
  const prefixes: string[] = [];
  for (let n = from; n < to; n++) {
    let code = '';
    for (let k = n, i = 0; i < 5; i++, k = Math.floor(k / 62)) code += ALPHANUMERIC[k % 62];
    prefixes.push(`svc_ak_${code}`);
  }
  await db.transaction(async (tx) => {
    await tx.query('set local session_replication_role = replica');
    await tx.query(
      `insert into agent_api_keys (organization_id, name, key_prefix, key_hash, scopes, expires_at)
       select $1, 'filler', p, '$2b$10$fillerfillerfillerfilleOu0Xq3m1M1kzQ3xwJ6c8b0Qn7Xr1y2', '{read}', now() + interval '30 days'
         from unnest($2::text[]) p`,
      [orgId, prefixes],
    );
  });
  await db.query('analyze agent_api_keys');
}

async function measure(run: () => Promise<unknown>) {
  for (let i = 0; i < 5; i++) await run();
  const t: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    await run();
    t.push(performance.now() - start);
  }
  t.sort((a, b) => a - b);
  return { p50: t[Math.floor(ROUNDS / 2)] ?? 0, p99: t[Math.floor(ROUNDS * 0.99)] ?? 0 };
}

async function bench(engine: string, db: Database): Promise<string> {
  await migrate(db);
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
  try {
    const passwords = createPasswords(10);
    const tokens = createTokens(await loadSigningKeys(dir), 'http://bench/auth/v1');
    const [org] = await db.query<{ id: string }>(
      "insert into organizations (name, plan) values ('Bench', 'scale') returning id",
    );
    const orgId = (org as { id: string }).id;
    const { apiKey } = await createApiKey(
      (s) => passwords.hash(s),
      (insertKey) => db.asPrincipal(SERVICE, (tx) => insertKey(tx, orgId)),
      { name: 'bench', scopes: ['read'], expiresAt: new Date(Date.now() + 86400_000) },
    );
    const exchange = () => exchangeApiKey({ db, passwords, tokens }, apiKey, '127.0.0.1');
    const bcryptOnly = await measure(() => passwords.verify(apiKey, undefined));
    await addFillerKeys(db, orgId, 1, 10);
    const small = await measure(exchange);
    await addFillerKeys(db, orgId, 10, 10_000);
    const large = await measure(exchange);
    const [n] = await db.query<{ n: number }>('select count(*)::int as n from agent_api_keys');
    const ms = (x: number) => `${x.toFixed(1)} ms`;
    console.log(`${engine}: one bcrypt compare alone p50 ${ms(bcryptOnly.p50)}`);
    console.log(`  10 keys:     p50 ${ms(small.p50)}  p99 ${ms(small.p99)}`);
    console.log(`  ${n?.n} keys: p50 ${ms(large.p50)}  p99 ${ms(large.p99)}`);
    return `agent-auth ${engine}: p50 ${ms(small.p50)} with 10 keys, ${ms(large.p50)} with ${n?.n} keys, ratio ${(large.p50 / small.p50).toFixed(2)} (goal ≤ 1.2)`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.close();
  }
}

const lines = [await bench('pglite', await openPglite(undefined))];
const onPostgres = await withScratchDatabase('auth', (url) => bench('postgres', openPostgres(url, 4)));
if (onPostgres) lines.push(onPostgres);
console.log();
for (const line of lines) console.log(line);
