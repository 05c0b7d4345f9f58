import pg from 'pg';
import {
  type Connection,
  claimsParams,
  type Database,
  type Principal,
  type Queryable,
  type Row,
  roleOf,
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

const wrap = (client: pg.PoolClient | pg.Pool): Connection => ({
  async query<T extends Row>(sql: string, params?: unknown[]) {
    return (await client.query(sql, params as unknown[])).rows as T[];
  },
  async exec(script: string) {
    await client.query(script);
  },
});

export function openPostgres(url: string, poolSize: number): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types });
  // An idle client that loses its server must not crash the process; the next checkout reconnects.
  pool.on('error', () => {});

  async function inTransaction<T>(
    begin: string,
    prelude: [string, unknown[]] | null,
    fn: (tx: Queryable) => Promise<T>,
  ) {
    const client = await pool.connect();
    try {
      await client.query(begin);
      if (prelude) await client.query(prelude[0], prelude[1]);
      const result = await fn(wrap(client));
      await client.query('commit');
      return result;
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  return {
    engine: 'postgres',
    query: (sql, params) => wrap(pool).query(sql, params),
    transaction: (fn) => inTransaction('begin', null, fn),
    asPrincipal: (principal: Principal, fn, opts) =>
      inTransaction(
        opts?.readOnly ? 'begin read only' : 'begin',
        [SET_CLAIMS_SQL, claimsParams(roleOf(principal), principal.claims)],
        fn,
      ),
    async withAdvisoryLock(key, fn) {
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [advisoryKey(key)]);
        try {
          return await fn(wrap(client));
        } finally {
          await client.query('select pg_advisory_unlock($1)', [advisoryKey(key)]);
        }
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
