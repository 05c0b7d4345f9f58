import pg from 'pg';
import {
  type Connection,
  claimsParams,
  type Database,
  type Principal,
  type Queryable,
  type Row,
  SET_CLAIMS_SQL,
} from './database.ts';
import { advisoryKey } from './lock-key.ts';

// int8 (counts, sequences) as numbers, as PGlite returns them; numeric stays a string (money).
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const wrap = (client: pg.ClientBase | pg.Pool): Connection => ({
  async query<T extends Row>(sql: string, params?: unknown[]) {
    return (await client.query(sql, params as unknown[])).rows as T[];
  },
  async exec(script: string) {
    await client.query(script);
  },
});

/**
 * A transaction on a pipelining connection. `begin` and the claims statement are written without
 * waiting, so they travel with the callback's first query: a request costs one round trip for
 * its work plus one for commit, instead of four. Their errors are still reported first.
 */
async function pipelined<T>(
  client: pg.PoolClient,
  prelude: [string, unknown[]] | null,
  fn: (tx: Queryable) => Promise<T>,
) {
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
  const tx: Queryable = {
    async query<R extends Row>(sql: string, params?: unknown[]) {
      const pending = client.query(sql, params as unknown[]);
      pending.catch(() => {});
      await ready();
      return (await pending).rows as R[];
    },
  };
  try {
    const result = await fn(tx);
    await ready();
    await client.query('commit');
    return result;
  } catch (err) {
    // A connection that cannot even roll back is not returned to the pool (see withClient).
    await client.query('rollback').catch((rollbackFailed: Error) => {
      (err as { connectionBroken?: Error }).connectionBroken = rollbackFailed;
    });
    throw err;
  }
}

export function openPostgres(url: string, poolSize: number): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types, pipeline: true } as pg.PoolConfig);
  // An idle client that loses its server must not crash the process; the next checkout reconnects.
  pool.on('error', () => {});

  async function withClient<T>(prelude: [string, unknown[]] | null, fn: (tx: Queryable) => Promise<T>) {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      return await pipelined(client, prelude, fn);
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
    transaction: (fn) => withClient(null, fn),
    asPrincipal: (principal: Principal, fn, opts) =>
      withClient([SET_CLAIMS_SQL, claimsParams(principal, opts?.readOnly)], fn),
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
    close: () => pool.end(),
  };
}
