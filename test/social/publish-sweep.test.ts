// What this file protects (issue 26, section 5): no scheduled post stays `scheduled` or
// `publishing` forever. A due post whose job is gone is published, once, by the next worker's
// sweep; a post whose job pg-boss failed on its own (its runs cut off past the retry limit: no
// onFailed ran) ends `failed` with the reason, whether a dead run had claimed it (publishing) or
// not (still scheduled), but never under a run that still holds its claim. The job's failure is
// set in pgboss.job as pg-boss leaves it (the real thing, with killed workers:
// test/conversations/send-sweep.test.ts).

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLISH_JOB, publishKey } from '../../src/domain/social-publish.ts';
import { startJobs } from '../../src/jobs/index.ts';
import { keyedId } from '../../src/platform/queue/pg-boss.ts';
import { PAGE, postState, type SocialWorld, schedule, settled, socialWorld } from '../helpers/social.ts';

let w: SocialWorld;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  // WORKER=off: nothing publishes until the test starts a worker or sweeps.
  w = await socialWorld({ WORKER: 'off', WORKER_SWEEP_SECONDS: '3600' });
});
afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo().catch(() => {});
  await w?.stop();
});

/** A post scheduled a second ahead, with its job, waited for until it is due; its job's id. */
async function duePost(message: string) {
  const post = await schedule(w, 'facebook', { message, inSeconds: 1 });
  const jobId = keyedId(
    PUBLISH_JOB,
    publishKey({ organization_id: w.org, post_id: post.id, scheduled_at: post.scheduled_at }),
  );
  const [job] = await w.svc.services.db.query('select 1 from pgboss.job where name = $1 and id = $2', [
    PUBLISH_JOB,
    jobId,
  ]);
  expect(job).toBeDefined();
  const due = new Date(post.scheduled_at).getTime();
  await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now()) + 100));
  return { id: post.id, jobId };
}

/** As pg-boss leaves a job whose runs it presumed dead past the retry limit. */
const failJob = (jobId: string) =>
  w.svc.services.db.query(
    `update pgboss.job set state = 'failed', completed_on = now(), output = '{"value":{"message":"job timed out"}}'
      where name = $1 and id = $2`,
    [PUBLISH_JOB, jobId],
  );

/** A run that claimed the post and died: the post publishing, its claim until `until`. */
const claimedBy = (id: string, until: string) =>
  w.svc.services.db.transaction(async (tx) => {
    await tx.query(`update public.social_posts set status = 'publishing' where id = $1`, [id]);
    await tx.query(
      `insert into app.social_publications (organization_id, post_id, scheduled_at, claimed_until, runs)
       select organization_id, id, scheduled_at, now() + $2::interval, 1 from public.social_posts where id = $1`,
      [id, until],
    );
  });

const sweep = async () => (await w.svc.services.queue.sweep())[PUBLISH_JOB];

describe('a post whose job pg-boss failed', () => {
  it('claimed by a run that died: failed with the reason once the claim has run out, never under it', async () => {
    const { id, jobId } = await duePost('Claimed, then lost');
    await claimedBy(id, '1 hour');
    await failJob(jobId);
    expect(await sweep()).toEqual({ requeued: 0, failed: 0 });
    expect((await postState(w, id)).status).toBe('publishing');
    await w.svc.services.db.query(
      `update app.social_publications set claimed_until = now() - interval '1 second' where post_id = $1`,
      [id],
    );
    expect(await sweep()).toEqual({ requeued: 0, failed: 1 });
    const s = await postState(w, id);
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ type: 'job_lost', gave_up: 'attempts' });
    expect(String(s.error?.message)).toMatch(/runs were cut off .*: job timed out/);
  });

  it('never claimed (still scheduled): failed with the reason', async () => {
    const { id, jobId } = await duePost('Never claimed');
    await failJob(jobId);
    expect(await sweep()).toEqual({ requeued: 0, failed: 1 });
    const s = await postState(w, id);
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ type: 'job_lost', gave_up: 'attempts' });
  });
});

describe('a due post whose job is gone', () => {
  it('is published once by the next worker, which enqueues it again when it sweeps', async () => {
    const { id, jobId } = await duePost('Lost and found');
    await w.svc.services.db.query('delete from pgboss.job where name = $1 and id = $2', [PUBLISH_JOB, jobId]);
    const queue = await startJobs({ ...w.svc.services, log: pino({ level: 'silent' }) }, { work: true });
    cleanup.push(() => queue.stop({ timeoutMs: 500 }));
    const s = await settled(w, id);
    expect(s.status).toBe('published');
    expect(w.graph.published(PAGE).filter((o) => o.text === 'Lost and found')).toEqual([
      expect.objectContaining({ id: s.provider_post_id }),
    ]);
  });
});
