import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type RequestDurations, requestDurations } from './request-durations.ts';

/**
 * The service's Prometheus metrics (docs/operations.md, "Metrics"): one registry per running
 * service (tests start several in one process), and the process's own metrics (CPU, memory,
 * event-loop lag, GC: prom-client's defaults) once per process, merged in at scrape time.
 *
 * Every label has a bounded set of values, named where the metric is fed: route templates and
 * known names, never raw paths, ids or free text.
 */
export type Metrics = {
  requests: RequestDurations;
  /** Outbound messages: one per attempt at Meta (the request's own or the worker's), by how it ended. */
  sends: Counter<'outcome'>;
  /** Social post runs of the publisher, by how they ended. */
  publishes: Counter<'outcome'>;
  /** Requests refused by a rate limit (by the limit's name) or the daily quota (`api-calls-per-day`). */
  refusals: Counter<'limit'>;
  /** From a webhook's receipt (its job's creation, in the receipt's transaction) to its event settled. */
  webhookLag: Histogram<never>;
  /** Gauges read when scraped (the database's pool, the job queue): collect() runs then. */
  gauge(name: string, help: string, labelNames: string[], collect: (g: Gauge) => Promise<void> | void): void;
  /** The exposition text and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
};

let processRegistry: Registry | undefined;

export function createMetrics(): Metrics {
  const registry = new Registry();
  const requests = requestDurations();
  registry.registerMetric(requests as never);
  const sends = new Counter({
    name: 'svc_message_sends_total',
    help: 'Attempts at sending an outbound message, by outcome (sent, failed, retry, settled, error)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const publishes = new Counter({
    name: 'svc_social_publishes_total',
    help: 'Runs of the social post publisher, by outcome (published, failed, retry, skipped, error)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'svc_refusals_total',
    help: 'Requests refused by a rate limit or the daily API-call quota, by limit',
    labelNames: ['limit'],
    registers: [registry],
  });
  const webhookLag = new Histogram({
    name: 'svc_webhook_processing_lag_seconds',
    help: 'Time from a webhook event received to its processing settled (processed, ignored, failed, rejected)',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [registry],
  });
  // Every outcome from the start, at 0: a rate over a series that appears only at its first
  // event misses that event, and an alert on failures needs the series before the first one.
  for (const outcome of ['sent', 'failed', 'retry', 'settled', 'error']) sends.inc({ outcome }, 0);
  for (const outcome of ['published', 'failed', 'retry', 'skipped', 'error']) publishes.inc({ outcome }, 0);
  return {
    requests,
    sends,
    publishes,
    refusals,
    webhookLag,
    gauge(name, help, labelNames, collect) {
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        collect() {
          return collect(this);
        },
      });
    },
    async scrape() {
      if (!processRegistry) {
        processRegistry = new Registry();
        collectDefaultMetrics({ register: processRegistry });
      }
      const merged = Registry.merge([processRegistry, registry]);
      return { contentType: merged.contentType, body: await merged.metrics() };
    },
  };
}
