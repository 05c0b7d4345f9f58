// The bare baseline bench/webhooks.ts holds Meta's receiver against, in a process of its own:
// node:http reads the whole body, verifies its X-Hub-Signature-256 (HMAC-SHA256 with the bench's
// app secret, compared in constant time), commits the raw body (one insert, its own implicit
// transaction) and answers 200 {"received":true}. The durable work a receipt needs, with none of
// the service's: no framework, no routing to accounts, no events or jobs. PostgreSQL: the
// service's own table (app.webhook_deliveries) on DATABASE_URL, a pool of 16; PGlite: a database
// of its own in BENCH_DATA_DIR with a table of the same shape (PGlite has one process).
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { verifyMetaSignature } from '../src/channels/meta-signature.ts';
import { serveBare } from './child.ts';
import { APP_SECRET } from './webhook-deliveries.ts';

const env = process.env;
type Store = (digest: string, payload: string) => Promise<unknown>;

async function open(): Promise<{ store: Store; close(): Promise<void> }> {
  if (env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 16 });
    const text = `insert into app.webhook_deliveries (provider, delivery_id, payload) values ('meta', $1, $2)
      on conflict (provider, delivery_id) do nothing`;
    return {
      store: (digest, payload) => pool.query({ name: 'store', text, values: [digest, payload] }),
      close: () => pool.end(),
    };
  }
  const db = await PGlite.create({ dataDir: path.join(env.BENCH_DATA_DIR ?? '', 'baseline') });
  await db.exec(`create table if not exists webhook_deliveries (
    id uuid primary key default gen_random_uuid(), provider text not null, delivery_id text not null,
    payload text not null, received_at timestamptz not null default now(), unique (provider, delivery_id))`);
  const text = `insert into webhook_deliveries (provider, delivery_id, payload) values ('meta', $1, $2)
    on conflict (provider, delivery_id) do nothing`;
  return { store: (digest, payload) => db.query(text, [digest, payload]), close: () => db.close() };
}

const { store, close } = await open();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.once('end', () => {
    const raw = Buffer.concat(chunks);
    const signature = req.headers['x-hub-signature-256'];
    if (!verifyMetaSignature(raw, typeof signature === 'string' ? signature : undefined, APP_SECRET)) {
      res.writeHead(401).end();
      return;
    }
    store(createHash('sha256').update(raw).digest('hex'), raw.toString('utf8')).then(
      () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
});
serveBare(server, () => close());
