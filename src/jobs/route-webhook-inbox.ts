import { PROCESS_WEBHOOK_EVENT } from '../domain/webhook-events.ts';
import { INBOX_BATCH, type RoutedBatch, webhookInboxRouter } from '../domain/webhook-inbox.ts';
import { type BatchLoop, batchLoop } from '../platform/queue/batch-loop.ts';
import type { JobDeps } from './deps.ts';

// The worker's router of the webhook inbox (src/domain/webhook-inbox.ts, docs/webhooks.md): every
// worker (inline or `svc worker`) runs one loop, woken by a receipt of its own process
// (WakeSignal, main.ts) or every WEBHOOK_INBOX_POLL_MS for receipts of other processes (on
// PostgreSQL). A batch's
// events are this process's to process first: its workers of process-webhook-event fetch at once.

/** One batch routed and logged: what the loop runs, and what tests call to route what is there. */
export function inboxRouter(deps: Pick<JobDeps, 'db' | 'queue' | 'log'>): () => Promise<RoutedBatch> {
  const router = webhookInboxRouter(deps.db, deps.queue);
  const { log } = deps;
  return async () => {
    const b = await router.route();
    if (b.events) deps.queue.wake(PROCESS_WEBHOOK_EVENT);
    // Acknowledged all the same, or Meta retries and finally disables the subscription.
    for (const r of b.unrouted)
      log.warn({ provider: r.provider, external_id: r.externalId }, 'webhook for an unknown account');
    if (b.unreadable)
      log.warn({ rows: b.unreadable }, 'webhook inbox rows that are no Meta delivery dropped');
    if (b.stored || b.duplicates)
      log.info(
        { deliveries: b.stored, duplicates: b.duplicates, events: b.events },
        'webhook deliveries routed',
      );
    return b;
  };
}

export function startInboxRouter(deps: JobDeps): BatchLoop {
  const route = inboxRouter(deps);
  return batchLoop({
    run: async () => (await route()).taken,
    batch: INBOX_BATCH,
    // On PGlite no other process can write the inbox (the data directory is this process's): the
    // poll only retries a failed batch, as often as the queue's own polls.
    pollMs: deps.db.engine === 'pglite' ? deps.config.worker.pollMs : deps.config.worker.inboxPollMs,
    log: deps.log,
    what: 'webhook inbox router',
  });
}
