// What this file protects: jobs a caller's own statement inserts (Queue.keyedJobsSql, the webhook
// receipt's one statement) are jobs a real pg-boss worker takes and completes; they are the rows
// pg-boss's own send writes, column for column, whatever columns the installed pg-boss's job table
// has; a key that has a job adds none; and a pg-boss whose send could no longer be inlined fails
// loudly at register instead of losing jobs. Real databases, both engines; no time is asserted.

import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { captureInsert } from '../../src/platform/queue/job-insert.ts';
import { keyedId, openQueue } from '../../src/platform/queue/pg-boss.ts';
import type { JobDefinition, JobPolicy, Queue } from '../../src/platform/queue/queue.ts';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { until } from '../helpers/work-rows.ts';

const silent = pino({ level: 'silent' });
const POLICY: JobPolicy = {
  attempts: 4,
  backoffSeconds: 7,
  maxBackoffSeconds: 90,
  maxAgeSeconds: 3600,
  leaseSeconds: 45,
};

let fresh: FreshDatabase;
const open: Queue[] = [];
let seq = 0;
const uniqueName = (tag: string) => `test-inline-${tag}-${process.pid}-${++seq}`;

beforeAll(async () => {
  fresh = await freshDatabase();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((q) => q.stop({ timeoutMs: 1000 })));
});
afterAll(async () => {
  await fresh.drop();
});

/** A queue with one job name whose runs are recorded; not working until `work()`. */
async function queueOf(name: string, policy = POLICY) {
  const runs: { id: string; data: unknown }[] = [];
  const def: JobDefinition<unknown> = {
    name,
    policy,
    async run(job) {
      runs.push({ id: job.id, data: job.data });
      return { status: 'done' };
    },
  };
  const queue = await openQueue(fresh.db, { log: silent, pollIntervalMs: 500, supervise: false });
  open.push(queue);
  await queue.register([def as JobDefinition<never>]);
  return { queue, runs };
}

/** One statement that inserts a job per key beside nothing else, as the webhook receipt does. */
const insertKeyed = async (queue: Queue, name: string, keys: string[]) =>
  (
    await fresh.db.query<{ ids: string[] }>(
      `with jobs as (${queue.keyedJobsSql(
        name,
        `select k as key, json_build_object('k', k) as data from unnest($1::text[]) k`,
      )}) select coalesce(array_agg(id::text order by id), '{}') as ids from jobs`,
      [keys],
    )
  )[0]?.ids;

const state = async (name: string, id: string) =>
  (
    await fresh.db.query<{ state: string }>('select state from pgboss.job where name = $1 and id = $2', [
      name,
      id,
    ])
  )[0]?.state;

describe('jobs inserted by a caller’s statement', () => {
  it('are taken and completed by a real pg-boss worker, with their data, under the id their key gives', async () => {
    const name = uniqueName('worked');
    const { queue, runs } = await queueOf(name);
    const ids = await insertKeyed(queue, name, ['a/1', 'b/2']);
    const expected = [keyedId(name, 'a/1'), keyedId(name, 'b/2')].sort();
    expect(ids).toEqual(expected);
    await queue.work();
    for (const id of expected) await until(async () => (await state(name, id)) === 'completed');
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect([...runs].sort(byId)).toEqual(
      [
        { id: keyedId(name, 'a/1'), data: { k: 'a/1' } },
        { id: keyedId(name, 'b/2'), data: { k: 'b/2' } },
      ].sort(byId),
    );
  });

  it('are the rows pg-boss’s send writes, in every column of the installed job table', async () => {
    const name = uniqueName('same-row');
    // The queue was created under an older policy: jobs carry the policy registered now, not the
    // queue's defaults (pg-boss.ts register), whichever way they are inserted.
    await queueOf(name, {
      ...POLICY,
      attempts: 2,
      backoffSeconds: 1,
      maxBackoffSeconds: 5,
      leaseSeconds: 600,
    });
    const { queue } = await queueOf(name);
    await insertKeyed(queue, name, ['inline']);
    await fresh.db.transaction((tx) => queue.enqueue(tx, name, { k: 'sent' }, { key: 'sent' }));
    // Every column, read by name from the table as it is: a column a pg-boss upgrade adds and
    // send fills in differently shows up here. Only what differs by nature is set apart: the ids,
    // the data, and the moments (their distance, keep_until after start_after, is compared).
    const rows = await fresh.db.query<{ id: string; row: Record<string, unknown>; kept: string }>(
      `select id::text, to_jsonb(j) - 'id' - 'data' - 'created_on' - 'start_after' - 'keep_until' as row,
              (keep_until - start_after)::text as kept
         from pgboss.job j where name = $1 order by data->>'k'`,
      [name],
    );
    expect(rows.map((r) => r.id)).toEqual([keyedId(name, 'inline'), keyedId(name, 'sent')]);
    const [inline, sent] = rows.map(({ row, kept }) => ({ ...row, kept }));
    expect(inline).toEqual(sent);
    // The queue's policy, as enqueue gives it (retryOptions in pg-boss.ts).
    expect(inline).toMatchObject({
      state: 'created',
      retry_limit: 4,
      retry_delay: 7,
      retry_backoff: true,
      retry_delay_max: 90,
      expire_seconds: 45,
    });
  });

  it('adds nothing for a key that already has a job, from either path', async () => {
    const name = uniqueName('once');
    const { queue } = await queueOf(name);
    await fresh.db.transaction((tx) => queue.enqueue(tx, name, { k: 'x' }, { key: 'x' }));
    expect(await insertKeyed(queue, name, ['x', 'y'])).toEqual([keyedId(name, 'y')]);
    expect(await insertKeyed(queue, name, ['y'])).toEqual([]);
    const [n] = await fresh.db.query<{ n: number }>(
      'select count(*)::int as n from pgboss.job where name = $1',
      [name],
    );
    expect(n?.n).toBe(2);
  });

  it('an unregistered name is refused before any SQL is built', async () => {
    const { queue } = await queueOf(uniqueName('known'));
    expect(() => queue.keyedJobsSql('never-registered', 'select 1')).toThrow(/register it first/);
  });
});

describe('a pg-boss whose send cannot be inlined', () => {
  // What another pg-boss version might do instead of one insert taking the jobs as one JSON
  // parameter: each is refused at capture, so register fails and every test with it.
  const sends: [string, string[]][] = [
    [
      'two statements',
      ['insert into pgboss.job select * from json_to_recordset($1::text::json)', 'select 1'],
    ],
    [
      'a NOTIFY wrapper',
      [
        'with ins as (insert into pgboss.job select * from json_to_recordset($1::text::json)) select id from ins',
      ],
    ],
    [
      'another parameter',
      ['insert into pgboss.job select * from json_to_recordset($1::text::json) where $2'],
    ],
    ['the jobs otherwise', ['insert into pgboss.job select * from jsonb_to_recordset($1)']],
  ];
  for (const [what, statements] of sends)
    it(`is refused at register: ${what}`, async () => {
      const boss = {
        async send(
          name: string,
          _data: object,
          opts: { db: { executeSql(text: string, values: unknown[]): Promise<unknown> } },
        ) {
          for (const text of statements) await opts.db.executeSql(text, [JSON.stringify([{ name }])]);
          return 'id';
        },
      };
      await expect(captureInsert(boss as never, 'q', {})).rejects.toThrow(/can no longer be inlined/);
    });
});
