import type { Database } from '../db/database.ts';

// Runs held by a worker that died (killed, crashed, out of memory) stay `active` in pg-boss until
// their lease runs out and a supervise pass of a surviving worker returns them, and that pass
// comes only every WORKER_SUPERVISE_SECONDS, never at a worker's start: while workers crash-loop,
// such jobs sat active, leases long run out, for minutes. A worker therefore returns them before it
// starts fetching.

/** What pg-boss's fail needs to settle one run and no later one: its id and the attempt it was. */
export type Run = { id: string; retryCount: number };

/** Fails the runs of `names` whose lease has run out, each fenced to its attempt. */
export async function returnExpiredLeases(
  db: Database,
  names: string[],
  fail: (name: string, runs: Run[], output: object) => Promise<unknown>,
): Promise<number> {
  if (!names.length) return 0;
  const rows = await db.query<{ name: string; id: string; retry_count: number }>(
    `select j.name, j.id, j.retry_count from pgboss.job j
      where j.name = any($1::text[]) and j.state = 'active'
        and j.started_on + j.expire_seconds * interval '1 second' < now()`,
    [names],
  );
  const byName = new Map<string, Run[]>();
  for (const r of rows)
    byName.set(r.name, [...(byName.get(r.name) ?? []), { id: r.id, retryCount: r.retry_count }]);
  // Fenced: a run that another worker's supervise pass returned and a worker took again meanwhile
  // is a later attempt, and stays as it is. Like pg-boss's own expiry, this counts as an attempt.
  for (const [name, runs] of byName) await fail(name, runs, { message: LEASE_EXPIRED });
  return rows.length;
}

export const LEASE_EXPIRED =
  'its lease ran out while a worker held it: the worker stopped (killed, crashed, out of memory) before the run ended';
