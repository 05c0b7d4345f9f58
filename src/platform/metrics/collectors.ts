import type { Gauge } from 'prom-client';
import type { Database } from '../db/database.ts';
import { createMetrics, type Metrics } from './metrics.ts';

/**
 * Gauges read at scrape time, so nothing is counted on the request's path: the database pool and
 * the shared read lanes (PostgreSQL only; PGlite is one engine in the process), and the job queue
 * per job name, from pg-boss's own table.
 */
export function collectDatabase(metrics: Metrics, db: Database): void {
  const { stats } = db;
  if (!stats) return;
  const byState = (name: string, help: string, read: () => Record<string, number>) =>
    metrics.gauge(name, help, ['state'], (g) => {
      for (const [state, n] of Object.entries(read())) g.set({ state }, n);
    });
  byState(
    'svc_db_pool_connections',
    'Pooled database connections: max (DATABASE_POOL_SIZE), open, idle, and callers waiting for one',
    () => stats().pool,
  );
  byState(
    'svc_db_read_lanes',
    'Shared read connections (DATABASE_READ_CONNECTIONS): max, open, and reads in flight on them',
    () => {
      const { max, open, inFlight } = stats().lanes;
      return { max, open, in_flight: inFlight };
    },
  );
}

type QueueRow = { name: string; queued: number; deferred: number; active: number; oldest: number | null };

/**
 * Per queue (job name): jobs due and waiting (`queued`), waiting for a later start (`deferred`:
 * retries in backoff, scheduled runs) and running (`active`); and how long the longest-waiting
 * due job has been due. Age is counted from when a job could first run (pg-boss's start_after),
 * not from its creation, so the daily purge scheduled a day ahead does not look late. One
 * statement over pg-boss's index of live jobs (job_i14); queues with no jobs answer zeros.
 */
const QUEUE_SQL = `select q.name,
    count(j.id) filter (where j.state < 'active' and j.start_after <= now())::int as queued,
    count(j.id) filter (where j.state < 'active' and j.start_after > now())::int as deferred,
    count(j.id) filter (where j.state = 'active')::int as active,
    extract(epoch from now() - min(j.start_after) filter (where j.state < 'active' and j.start_after <= now()))::float8 as oldest
  from pgboss.queue q
  left join pgboss.job j on j.name = q.name and j.state <= 'active'
 group by q.name`;

export function collectQueue(metrics: Metrics, db: Pick<Database, 'query'>): void {
  // Both gauges are collected at once by the registry: one statement serves the two.
  let reading: Promise<QueueRow[]> | undefined;
  const rows = () => {
    reading ??= db.query<QueueRow>(QUEUE_SQL).finally(() => {
      reading = undefined;
    });
    return reading;
  };
  const fill = (set: (g: Gauge, r: QueueRow) => void) => async (g: Gauge) => {
    g.reset();
    let found: QueueRow[];
    try {
      found = await rows();
    } catch {
      return; // the database is out of reach: no figures rather than a failed scrape
    }
    for (const r of found) set(g, r);
  };
  metrics.gauge(
    'svc_queue_jobs',
    'Jobs per job name: queued (due, waiting for a worker), deferred (retry backoff, scheduled) and active',
    ['name', 'state'],
    fill((g, r) => {
      g.set({ name: r.name, state: 'queued' }, r.queued);
      g.set({ name: r.name, state: 'deferred' }, r.deferred);
      g.set({ name: r.name, state: 'active' }, r.active);
    }),
  );
  metrics.gauge(
    'svc_queue_oldest_job_age_seconds',
    'Per job name, how long the longest-waiting due job has been due (0 when none waits)',
    ['name'],
    fill((g, r) => g.set({ name: r.name }, Math.max(0, r.oldest ?? 0))),
  );
}

/** A process's metrics with its database's pool and the queue's gauges read at each scrape. */
export function processMetrics(db: Database): Metrics {
  const metrics = createMetrics();
  collectDatabase(metrics, db);
  collectQueue(metrics, db);
  return metrics;
}
