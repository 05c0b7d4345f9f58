// The bare baseline bench/rest.ts holds the service against, in a process of its own: node:http
// and the database driver, no framework, no authentication, no REST layer. For each measured
// path it sends exactly the statements the service sent for it (recorded by bench/rest-service.ts:
// the claims statement with the same claims, then the same SQL and values) in one transaction.
//
// PostgreSQL: what a careful hand-written server does with node-postgres — `begin`, the
// statements and `commit` issued at once on a pipelining connection and corked into one socket
// write (one round trip), each statement prepared once per connection by name; what the service
// sent as one implicit transaction (db.queryAs) goes the same way here, claims and statement
// before one Sync (the project's OneSync: the wire shape, not the service's code path), a
// read-only one on the service's shared read connections (read-lanes.ts, as many as it has).
// PGlite: the same statements inside PGlite's own transaction(), the one connection it has, or,
// for what the service sent as one implicit transaction, as one protocol buffer in one call
// (pglite-one-sync.ts, the same shape).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import pg from 'pg';
import { OneSync, runOneSync } from '../src/platform/db/one-sync.ts';
import { runOneSync as runPgliteOneSync } from '../src/platform/db/pglite-one-sync.ts';
import { readLanes } from '../src/platform/db/read-lanes.ts';
import { serveBare } from './child.ts';
import type { BenchRequest, Fixture, Statement } from './rest-service.ts';

const env = process.env;
const fixture = JSON.parse(readFileSync(env.BENCH_FIXTURE ?? '', 'utf8')) as Fixture;
/**
 * Every path a run sends, with the request it is one of and the id it names: the recorded
 * statements are sent with that id in the place of the recorded one. Under `/plain` the same read
 * is sent alone as the owner, no claims (what the claims step costs is the difference).
 */
type Target = { r: BenchRequest; id: string | undefined; plain: boolean };
const byPath = new Map<string, Target>();
for (const r of fixture.requests) {
  for (const id of r.ids.length ? r.ids : [undefined]) {
    const at = id === undefined ? r.path : r.path.replace(r.ids[0] ?? '', id);
    byPath.set(`${r.method} ${at}`, { r, id, plain: false });
    if (r.oneSync && r.readOnly) byPath.set(`${r.method} /plain${at}`, { r, id, plain: true });
  }
}
/** The statements as recorded, with `id` bound where the recorded id was. */
const withId = (r: BenchRequest, id: string | undefined): Statement[] =>
  id === undefined || id === r.ids[0]
    ? r.statements
    : r.statements.map((s) => ({ ...s, values: s.values.map((v) => (v === r.ids[0] ? id : v)) }));
// Each statement's name, computed once per text, as the service's statement cache keeps them.
const names = new Map<string, string>();
const named = (text: string) => {
  let name = names.get(text);
  if (name === undefined) {
    name = `b${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    names.set(text, name);
  }
  return name;
};

type Run = (
  r: BenchRequest,
  statements: Statement[],
  plain: boolean,
) => Promise<Record<string, unknown> | undefined>;
let close = async () => {};

function onPostgres(url: string): Run {
  const config = { connectionString: url, pipeline: true } as pg.ClientConfig;
  const pool = new pg.Pool({ ...config, max: 16 } as pg.PoolConfig);
  const lanes = readLanes(() => new pg.Client(config), fixture.readConnections);
  close = async () => {
    await Promise.all([pool.end(), lanes.close()]);
  };
  return async (r, statements, plain) => {
    if (r.oneSync) {
      // The service sent claims and statement before one Sync (db.queryAs): the same wire shape,
      // a read on the same number of shared connections.
      const lane = r.readOnly ? lanes.take() : undefined;
      const client = lane?.client ?? (await pool.connect());
      const [claims, read] = statements as [Statement, Statement];
      const batch = new OneSync([
        { name: named(claims.text), ...claims },
        { name: named(read.text), ...read },
      ]);
      try {
        // The read alone, as the owner: a statement of its own, its own implicit transaction.
        if (plain) return (await client.query({ name: named(read.text), ...read })).rows[0];
        return (await runOneSync(client, batch))[1]?.rows[0];
      } finally {
        if (lane) lanes.done(lane);
        else (client as pg.PoolClient).release();
      }
    }
    const client = await pool.connect();
    const stream = (
      client as unknown as {
        connection: { stream: NodeJS.WritableStream & { cork(): void; uncork(): void } };
      }
    ).connection.stream;
    stream.cork();
    const sent = [
      client.query('begin'),
      ...statements.map((s) => client.query({ name: named(s.text), text: s.text, values: s.values })),
      client.query('commit'),
    ];
    stream.uncork();
    try {
      const results = await Promise.all(sent);
      return results[results.length - 2]?.rows[0];
    } finally {
      client.release();
    }
  };
}

async function onPglite(dataDir: string): Promise<Run> {
  // With the extension the schema uses, as the service opens it: an insert into contacts updates
  // the trigram indexes (migration 0012), which need pg_trgm loaded.
  const db = await PGlite.create({ dataDir: path.join(dataDir, 'pglite'), extensions: { pg_trgm } });
  close = () => db.close(); // the service opens this directory next: leave it consistent
  return async (r, statements, plain) => {
    // What the service sent as one implicit transaction goes the same way: one call, one Sync.
    if (plain) return (await runPgliteOneSync(db, statements.slice(1), r))[0]?.[0];
    if (r.oneSync) return (await runPgliteOneSync(db, statements, r))[1]?.[0];
    return db.transaction(async (tx) => {
      let last: Record<string, unknown> | undefined;
      for (const s of statements) last = (await tx.query<Record<string, unknown>>(s.text, s.values)).rows[0];
      return last;
    });
  };
}

const run = env.DATABASE_URL ? onPostgres(env.DATABASE_URL) : await onPglite(env.BENCH_DATA_DIR ?? '');

const server = createServer((req, res) => {
  const target = byPath.get(`${req.method} ${req.url}`);
  if (!target) {
    res.writeHead(404).end();
    return;
  }
  const { r, id, plain } = target;
  req.resume(); // the body is the recorded one; only its arrival matters
  req.once('end', () => {
    run(r, withId(r, id), plain).then(
      (row) => {
        const body = typeof row?.body === 'string' ? row.body : '';
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(r.status === 201 ? '' : body);
      },
      (err: Error) => {
        res.writeHead(500).end(err.message);
      },
    );
  });
});
serveBare(server, () => close());
