// Prepared statements per SQL shape (src/platform/db/statement-cache.ts), on a real PostgreSQL
// connection: a connection never holds more than its bound, however many shapes arrive, and the
// statements it evicted, or that failed, still run when they come back.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepared } from '../../src/platform/db/statement-cache.ts';
import { type FreshDatabase, freshDatabase, onPostgres } from '../helpers/db.ts';

let fresh: FreshDatabase;
let client: pg.Client;
beforeAll(async () => {
  if (!onPostgres()) return;
  fresh = await freshDatabase();
  client = new pg.Client({ connectionString: fresh.url, pipeline: true } as pg.ClientConfig);
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await fresh?.drop();
});

const held = async () =>
  Number((await client.query('select count(*) as n from pg_prepared_statements')).rows[0]?.n);

describe.skipIf(!onPostgres())('prepared statements per connection', () => {
  it('keeps at most its bound of statements, and evicted shapes run again when they return', async () => {
    const shape = (k: number) => `select $1::int + ${k} as v`;
    for (let round = 0; round < 3; round++) {
      for (let k = 0; k < 6; k++) {
        const res = await client.query(prepared(client, shape(k), [round], 2));
        expect(res.rows[0]?.v).toBe(round + k);
        expect(await held()).toBeLessThanOrEqual(2);
      }
    }
  });

  it('runs a shape again after it failed on its values', async () => {
    const sql = 'select $1::uuid as id';
    await expect(client.query(prepared(client, sql, ['not-a-uuid'], 2))).rejects.toMatchObject({
      code: '22P02',
    });
    const id = '00000000-0000-4000-8000-000000000000';
    expect((await client.query(prepared(client, sql, [id], 2))).rows[0]?.id).toBe(id);
  });
});
