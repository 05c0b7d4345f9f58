import pg from 'pg';
import {
  type Connection,
  claimsParams,
  claimsStatement,
  type Database,
  type Principal,
  perClaims,
  type Queryable,
  type Row,
  SET_CLAIMS_SQL,
} from './database.ts';
import { advisoryKey } from './lock-key.ts';
import { OneSync, runOneSync } from './one-sync.ts';
import { readLanes } from './read-lanes.ts';
import { forgetOnError, prepared } from './statement-cache.ts';

// int8 (counts, sequences) as numbers, as PGlite returns them; numeric stays a string (money).
const parseInt8 = (v: string) => Number(v);
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const wrap = (client: pg.ClientBase | pg.Pool): Connection => ({
  async query<T extends Row>(sql: string, params?: unknown[]) {
    return (await client.query(sql, params as unknown[])).rows as T[];
  },
  async exec(script: string) {
    await client.query(script);
  },
});

// The claims statement is the same text on every request: prepared once per connection.
const namedClaims = perClaims((principal, readOnly) => ({
  name: 'svc_set_claims',
  ...claimsStatement(principal, readOnly),
}));

type Corkable = { cork(): void; uncork(): void };
const socketOf = (client: pg.PoolClient) =>
  (client as unknown as { connection: { stream: Corkable } }).connection.stream;

/**
 * A transaction on a pipelining connection. `begin`, the claims statement and the callback's
 * first statement are written without waiting, corked into one socket write (one syscall, one
 * TCP segment) instead of one write each: a request costs one round trip for its work plus
 * `commit`. Their errors are still reported first. Statements with values are prepared once per
 * connection (statement-cache.ts), so the read is not planned again on every request.
 *
 * A read-only transaction does not wait for its `commit`: nothing it did can fail to commit, and
 * the connection goes back to the pool at once, so whatever the next caller sends on it is queued
 * behind the `commit` on the wire and runs after it, with none of these claims left. The answer
 * leaves after one round trip instead of two, and under load the commit shares a write with the
 * next request's statements. A write still waits for `commit` (a deferred constraint or a lost
 * connection must fail the request).
 */
async function pipelined<T>(
  client: pg.PoolClient,
  prelude: [string, unknown[]] | null,
  fn: (tx: Queryable) => Promise<T>,
  readOnly = false,
) {
  const socket = socketOf(client);
  socket.cork();
  // The claims statement is the same text on every request: prepared once per connection.
  const started = [
    client.query('begin'),
    ...(prelude ? [client.query({ name: 'svc_set_claims', text: prelude[0], values: prelude[1] })] : []),
  ];
  for (const p of started) p.catch(() => {}); // awaited below; never an unhandled rejection
  let settled = false;
  const ready = async () => {
    if (!settled) {
      settled = true;
      await Promise.all(started);
    }
  };
  let failed: string | undefined; // the text of a statement that failed, for forgetOnError
  const tx: Queryable = {
    async query<R extends Row>(sql: string, params?: unknown[]) {
      const pending = client.query(prepared(client, sql, params));
      pending.catch(() => {});
      await ready();
      try {
        return (await pending).rows as R[];
      } catch (err) {
        failed = sql;
        throw err;
      }
    },
  };
  try {
    let work: Promise<T>;
    try {
      work = fn(tx); // runs up to its first await: its first statement joins the corked write
    } finally {
      socket.uncork();
    }
    const result = await work;
    await ready();
    if (readOnly) {
      // Corked until this turn of the event loop ends: the next caller handed this connection
      // by the pool meanwhile writes its own begin, claims and statement behind the commit, and
      // all of it leaves in one write; otherwise the commit leaves alone a moment later.
      socket.cork();
      client.query('commit').catch(() => {});
      setImmediate(() => socket.uncork());
    } else {
      await client.query('commit');
    }
    return result;
  } catch (err) {
    // A connection that cannot even roll back is not returned to the pool (see withClient).
    const rollback = client.query('rollback');
    if (failed !== undefined) forgetOnError(client, err, failed);
    await rollback.catch((rollbackFailed: Error) => {
      (err as { connectionBroken?: Error }).connectionBroken = rollbackFailed;
    });
    throw err;
  }
}

export function openPostgres(url: string, poolSize: number, readConnections = 1): Database {
  const config = { connectionString: url, types, pipeline: true } as pg.ClientConfig;
  const pool = new pg.Pool({ ...config, max: poolSize } as pg.PoolConfig);
  const lanes = readLanes(() => new pg.Client(config), readConnections);
  // An idle client that loses its server must not crash the process; the next checkout reconnects.
  pool.on('error', () => {});
  // Multi-statement scripts need the simple protocol, which a pipelining connection refuses: a
  // small plain pool of their own, opened on first use (only the job queue sends them).
  let plain: pg.Pool | undefined;
  const plainPool = () => {
    if (!plain) {
      plain = new pg.Pool({ connectionString: url, max: 3, types });
      plain.on('error', () => {});
    }
    return plain;
  };

  async function withClient<T>(
    prelude: [string, unknown[]] | null,
    fn: (tx: Queryable) => Promise<T>,
    readOnly = false,
  ) {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      return await pipelined(client, prelude, fn, readOnly);
    } catch (err) {
      broken = (err as { connectionBroken?: Error }).connectionBroken;
      throw err;
    } finally {
      client.release(broken);
    }
  }

  return {
    engine: 'postgres',
    query: (sql, params) => wrap(pool).query(sql, params),
    async script<T extends Row>(sql: string) {
      const result = (await plainPool().query(sql)) as pg.QueryResult | pg.QueryResult[];
      return (Array.isArray(result) ? result : [result]).flatMap((r) => (r.rows ?? []) as T[]);
    },
    transaction: (fn) => withClient(null, fn),
    asPrincipal: (principal: Principal, fn, opts) =>
      withClient([SET_CLAIMS_SQL, claimsParams(principal, opts?.readOnly)], fn, opts?.readOnly),
    async queryAs(principal, sql, params, opts) {
      const lane = opts?.readOnly ? lanes.take() : undefined;
      const client = lane ? lane.client : await pool.connect();
      const claims = namedClaims(principal, opts?.readOnly);
      const read = prepared(client, sql, params);
      const batch = new OneSync([
        claims,
        { name: 'name' in read ? read.name : '', text: sql, values: params },
      ]);
      let broken: Error | undefined;
      try {
        const results = await runOneSync(client, batch);
        return (results[1]?.rows ?? []) as never[];
      } catch (err) {
        // A server error leaves the connection usable; anything else (a lost socket) does not,
        // nor does a statement the connection's record says exists but the server does not know.
        if (!(err instanceof pg.DatabaseError) || err.code === '26000') broken = err as Error;
        else forgetOnError(client, err, sql);
        throw err;
      } finally {
        if (lane) lanes.done(lane, broken);
        else (client as pg.PoolClient).release(broken);
      }
    },
    // Migrations run multi-statement scripts, which need a plain (non-pipelined) connection.
    async withAdvisoryLock(key, fn) {
      const client = new pg.Client({ connectionString: url, types });
      client.on('error', () => {}); // a lost connection fails the pending query instead of the process
      await client.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [advisoryKey(key)]);
        return await fn(wrap(client));
      } finally {
        await client.end();
      }
    },
    // LISTEN needs a connection of its own for as long as it listens.
    async listen(channel, onNotify) {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => {}); // a lost listener only delays a reload until restart
      await client.connect();
      client.on('notification', (n) => {
        if (n.channel === channel) onNotify();
      });
      await client.query(`listen ${channel.replace(/[^a-z_]/g, '')}`);
      return () => client.end();
    },
    async close() {
      await Promise.all([pool.end(), plain?.end(), lanes.close()]);
    },
  };
}
