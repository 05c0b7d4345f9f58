import type { PgBoss } from 'pg-boss';
import type { SqlExecutor } from './adapters.ts';

// Jobs inserted by a caller's own statement (a CTE beside the rows they are about), so that a
// write and its jobs are one statement and one round trip (docs/decisions.md "Webhook receipt in
// one autocommit statement"). The insert is not a copy of pg-boss's: it is the statement pg-boss's
// `send` builds for the queue in this installed version, captured once when the queue is
// registered (never run), with its one JSON parameter replaced by SQL that makes the same JSON per
// row. So the columns, the queue's policy, retry and expiry settings, keep_until and singleton
// handling are pg-boss's own; an upgrade that changes how a job is sent changes this with it, and
// one that sends in a way this cannot take (another statement, a NOTIFY wrapper, more parameters)
// fails the queue's register, in every test, instead of losing jobs.

/** The one parameter of pg-boss's insert: the jobs as a JSON array (json_to_recordset's input). */
const PARAM = '$1::text::json';

export type CapturedInsert = {
  name: string;
  /** pg-boss's insert, `$1::text::json` in it. */
  text: string;
  /** The job send would insert, without `id`, `data` and trace context: what every row shares. */
  shared: Record<string, unknown>;
};

/** Captures what `boss.send(name, {}, options)` would run, without running it. */
export async function captureInsert(boss: PgBoss, name: string, options: object): Promise<CapturedInsert> {
  const sent: { text: string; values: unknown[] | undefined }[] = [];
  const capture: SqlExecutor = {
    async executeSql(text, values) {
      sent.push({ text, values });
      return { rows: [{ id: '00000000-0000-4000-8000-000000000000' }] };
    },
  };
  await boss.send(name, {}, { ...options, db: capture } as Parameters<PgBoss['send']>[2]);
  const [only] = sent;
  const unusable = (why: string) =>
    new Error(`pg-boss's send of "${name}" can no longer be inlined into a statement: ${why}`);
  if (!only || sent.length !== 1) throw unusable(`it sent ${sent.length} statements, not 1`);
  const text = only.text.trim();
  if (!/^insert\s/i.test(text)) throw unusable('its statement is not a plain INSERT');
  if (text.split(PARAM).length !== 2 || (text.match(/\$\d/g) ?? []).length !== 1)
    throw unusable(`its statement does not take the jobs as one ${PARAM} parameter`);
  const jobs = JSON.parse(String(only.values?.[0])) as Record<string, unknown>[];
  if (only.values?.length !== 1 || jobs.length !== 1 || jobs[0]?.name !== name)
    throw unusable('its parameter is not one job of the queue');
  const { id: _id, data: _data, __traceContext: _trace, ...shared } = jobs[0] as Record<string, unknown>;
  return { name, text, shared };
}

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * The captured insert for one job per row of `rows` (SQL selecting `key text` and `data` json or
 * jsonb): each job's id is app.job_key_id(name, key), the id `enqueue(…, {key})` gives it
 * (keyed-id.ts), so a second insert of a key adds nothing (pg-boss's `on conflict do nothing`).
 * A data-modifying statement for a CTE; it returns the ids of the jobs it inserted.
 */
export function keyedJobsSql(c: CapturedInsert, rows: string): string {
  const job = `${literal(JSON.stringify(c.shared))}::jsonb || jsonb_build_object(
      'id', app.job_key_id(${literal(c.name)}, r.key), 'data', r.data)`;
  const jobs = `(select coalesce(json_agg(${job}), '[]') from (${rows}) r)`;
  return c.text.replace(PARAM, () => jobs);
}
