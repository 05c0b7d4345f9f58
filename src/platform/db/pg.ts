import pg from 'pg';
import {
  type Connection,
  claimsStatement,
  type Database,
  type Principal,
  perClaims,
  type Queryable,
  type Row,
} from './database.ts';
import { advisoryKey } from './lock-key.ts';
import { OneSync, runOneSync } from './one-sync.ts';
import { readLanes } from './read-lanes.ts';
import { forgetOnError, prepared } from './statement-cache.ts';

// int8 (counts, sequences) as numbers, as PGlite returns them; numeric stays a string (money).
const parseInt8 = (v: string) => Number(v);
export const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export const wrap = (client: pg.ClientBase | pg.Pool): Connection => ({
  async query<T extends Row>(sql: string, params?: unknown[]) {
    return (await client.query(sql, params as unknown[])).rows as T[];
  },
  async exec(script: string) {
    await client.query(script);
  },
});

// A token's claims statement, kept per token and mode; each kind's text is prepared once per
// connection under its own name (database.ts).
const namedClaims = perClaims(claimsStatement);
type Named = { name: string; text: string; values: unknown[] };

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
  prelude: Named | null,
  fn: (tx: Queryable) => Promise<T>,
  readOnly = false,
) {
  const socket = socketOf(client);
  socket.cork();
  const started = [client.query('begin'), ...(prelude ? [client.query(prelude)] : [])];
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

/**
 * How long opening a connection may take before the caller is answered 503: a server that is down
 * refuses at once, but one behind a dead route would leave the request waiting for the kernel's
 * TCP timeout (minutes). It also bounds the wait for a free pooled connection.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A pool whose connections never crash the process. A connection the server drops (a restart,
 * `pg_terminate_backend`, a network cut) emits 'error' on its client, and pg-pool listens for it
 * only while the client is idle: one checked out between two statements had no listener, and the
 * unhandled 'error' event ended the process. The statement in flight fails on its own (the
 * request answers 503: errors.ts), and `release()` sees the client is no longer queryable and
 * discards it; the next checkout opens a new connection.
 */
export function resilientPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...config });
  pool.on('connect', (client) => client.on('error', () => {}));
  pool.on('error', () => {}); // an idle client's loss, after the pool has discarded it
  return pool;
}

export function openPostgres(url: string, poolSize: number, readConnections = 1): Database {
  const config = { connectionString: url, types, pipeline: true } as pg.ClientConfig;
  const pool = resilientPool({ ...config, max: poolSize } as pg.PoolConfig);
  const lanes = readLanes(
    () => new pg.Client({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS }),
    readConnections,
  );
  // Multi-statement scripts need the simple protocol, which a pipelining connection refuses: a
  // small plain pool of their own, opened on first use (only the job queue sends them).
  let plain: pg.Pool | undefined;
  const plainPool = () => {
    plain ??= resilientPool({ connectionString: url, max: 3, types });
    return plain;
  };

  async function withClient<T>(prelude: Named | null, fn: (tx: Queryable) => Promise<T>, readOnly = false) {
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
    async query<T extends Row>(sql: string, params?: unknown[], opts?: { prepare?: boolean }) {
      if (!opts?.prepare) return wrap(pool).query<T>(sql, params);
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        return (await client.query(prepared(client, sql, params))).rows as T[];
      } catch (err) {
        // As in queryAs: a server error leaves the connection usable, a lost socket does not.
        if (!(err instanceof pg.DatabaseError) || err.code === '26000') broken = err as Error;
        else forgetOnError(client, err, sql);
        throw err;
      } finally {
        client.release(broken);
      }
    },
    script: (sql) => runScript(plainPool(), sql),
    transaction: (fn) => withClient(null, fn),
    asPrincipal: (principal: Principal, fn, opts) =>
      withClient(namedClaims(principal, opts?.readOnly), fn, opts?.readOnly),
    async queryAs(principal, sql, params, opts) {
      const lane = opts?.readOnly ? lanes.take() : undefined;
      const client = lane ? lane.client : await pool.connect();
      const claims = namedClaims(principal, opts?.readOnly);
      const read = prepared(client, sql, params);
      const batch = new OneSync([claims, 'name' in read ? read : { name: '', text: sql, values: params }]);
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
    listen: (channel, onNotify) => listenWithReconnect(url, channel, onNotify),
    async close() {
      await Promise.all([pool.end(), plain?.end(), lanes.close()]);
    },
    stats: () => ({ pool: poolStats(pool, poolSize), lanes: { max: readConnections, ...lanes.stats() } }),
  };
}

/** How long a lost LISTEN connection waits before it tries again, and at most between tries. */
const RELISTEN_MS = [250, 5_000] as const;

/**
 * LISTEN on a connection of its own that comes back after the server does (a restart, a
 * terminated backend): notifications sent while it was away are lost, so `onNotify` is called
 * once when it is back, as if one had come. The first connection must succeed (the service does
 * not start without its database); later ones are retried with a doubling wait.
 */
export async function listenWithReconnect(
  url: string,
  channel: string,
  onNotify: (payload?: string) => void,
) {
  const name = channel.replace(/[^a-z_]/g, '');
  let live = false; // listened once: from then on a lost connection is tried again
  let stopped = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wait: number = RELISTEN_MS[0];
  const open = async () => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    c.on('error', () => {}); // the 'end' that follows schedules the next try
    c.on('notification', (n) => {
      if (n.channel === name) onNotify(n.payload);
    });
    c.once('end', () => {
      if (client === c) client = undefined;
      if (live && !stopped) timer = setTimeout(retry, wait);
    });
    try {
      await c.connect();
      await c.query(`listen ${name}`);
    } catch (err) {
      await c.end().catch(() => {});
      throw err;
    }
    client = c;
    wait = RELISTEN_MS[0];
  };
  const retry = () => {
    if (stopped) return;
    wait = Math.min(wait * 2, RELISTEN_MS[1]);
    // A failed try ends its client, whose 'end' tries again.
    const heardAgain = () => onNotify();
    open().then(heardAgain, () => {});
  };
  await open();
  live = true;
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await client?.end();
  };
}

/** A script of several statements in the simple protocol; the rows of every one, in order. */
export async function runScript<T extends Row>(pool: pg.Pool, sql: string): Promise<T[]> {
  const result = (await pool.query(sql)) as pg.QueryResult | pg.QueryResult[];
  return (Array.isArray(result) ? result : [result]).flatMap((r) => (r.rows ?? []) as T[]);
}

/** The pool's side of `Database.stats`. */
export const poolStats = (pool: pg.Pool, max: number) => ({
  max,
  open: pool.totalCount,
  idle: pool.idleCount,
  waiting: pool.waitingCount,
});
