import { randomUUID } from 'node:crypto';
import type { Database } from '../platform/db/database.ts';

/**
 * The organizations this process has a channel in, told to the database: a write notifies only
 * when some live process has asked for its organization (migrations/0059; docs/decisions.md,
 * "Notices only where someone listens"). A row lives TTL_SECONDS unless refreshed; this process
 * refreshes its rows every REFRESH_MS while it has any, and drops those of organizations it no
 * longer has a channel in, with every other process's expired ones.
 */
const TTL_SECONDS = 120;
const REFRESH_MS = 30_000;

const UPSERT = `insert into app.realtime_interest (organization_id, process, until)
  select o, $2, pg_catalog.now() + pg_catalog.make_interval(secs => $3) from pg_catalog.unnest($1::uuid[]) o
  on conflict (organization_id, process) do update set until = excluded.until`;
const REFRESH = `with gone as (
    delete from app.realtime_interest
     where (process = $2 and organization_id <> all($1::uuid[])) or (process <> $2 and until < pg_catalog.now())
  ) ${UPSERT}`;

export function realtimeInterest(
  db: Database,
  orgs: () => Iterable<string>,
  onError: (err: unknown) => void,
) {
  const processId = randomUUID();
  const told = new Map<string, Promise<unknown>>();
  let timer: NodeJS.Timeout | undefined;
  // One statement at a time, in order: a refresh that drops an organization cannot land after a
  // join that asked for it again.
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = (sql: string, params: () => unknown[]) => {
    const run = turn.then(() => db.query(sql, params()));
    turn = run.catch(() => {});
    return run;
  };

  function refresh() {
    return inTurn(REFRESH, () => {
      const now = new Set(orgs());
      for (const org of told.keys()) if (!now.has(org)) told.delete(org);
      if (now.size === 0) stopRefreshing();
      return [[...now], processId, TTL_SECONDS];
    });
  }

  function stopRefreshing() {
    clearInterval(timer);
    timer = undefined;
  }

  return {
    /** Resolves once writes in `org` notify (at once when this process already asked). */
    want(org: string): Promise<unknown> {
      let asked = told.get(org);
      if (!asked) {
        const started = inTurn(UPSERT, () => [[org], processId, TTL_SECONDS]);
        asked = started;
        told.set(org, started);
        started.catch(() => {
          if (told.get(org) === started) told.delete(org); // the next join asks again
        });
      }
      if (!timer) {
        timer = setInterval(() => refresh().catch(onError), REFRESH_MS);
        timer.unref();
      }
      return asked;
    },
    /** Removes this process's rows (a stop); rows of a process that died expire instead. */
    async close() {
      stopRefreshing();
      told.clear();
      await inTurn('delete from app.realtime_interest where process = $1', () => [processId]).catch(onError);
    },
  };
}
