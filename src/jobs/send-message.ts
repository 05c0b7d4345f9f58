import { deliver, deliverDeps, giveUp, type SendJob, sendPolicy } from '../domain/deliver-message.ts';
import type { JobDefinition } from '../platform/queue/queue.ts';
import type { JobDeps } from './deps.ts';

// The worker's side of a send: retries of the attempts src/domain/deliver-message.ts makes.

/** Queued messages no live attempt holds, for the sweep (JobDefinition.unsettled). */
const SEND_UNSETTLED = `select m.organization_id::text || '/' || m.id::text as key,
    jsonb_build_object('organization_id', m.organization_id, 'message_id', m.id) as data,
    m.created_at as since
  from public.messages m
 where m.status = 'queued' and m.direction = 'out'
   and (m.sending_until is null or m.sending_until < now())`;

/** The worker's side: retries with backoff (config), then `failed`; the sweep's way in. */
export function sendMessageJob(jobDeps: JobDeps): JobDefinition<SendJob> {
  const deps = deliverDeps(jobDeps);
  return {
    name: 'send-message',
    policy: sendPolicy(jobDeps.config),
    async run(job) {
      const d = await deliver(deps, job.data);
      if (d.state === 'retry') return { status: 'retry', error: d.error };
      return { status: 'done' }; // sent, failed (recorded) or settled: nothing more to do
    },
    async onFailed(job, failure) {
      const last = failure.error;
      const error =
        last instanceof Error
          ? { type: last.name, message: last.message }
          : last && typeof last === 'object'
            ? (last as Record<string, unknown>)
            : {};
      await giveUp(deps, job.data, { ...error, gave_up: failure.reason });
    },
    unsettled: SEND_UNSETTLED,
  };
}
