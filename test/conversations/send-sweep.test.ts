// What this file protects (issue 26, section 5): no message stays `queued` forever. A message
// whose job pg-boss failed on its own (SEND_RETRY_ATTEMPTS 1, so a retry limit of 1, and both
// runs cut off by killed workers: no onFailed ever ran) ends `failed` with the reason, never having
// reached Meta; a message whose job is gone is sent, once, by the next worker's sweep; a message
// whose job failed while an attempt still holds its claim is left to that attempt, and given up
// once the claim has run out.
// PostgreSQL: the killed workers are real `svc worker` processes (dying-sender.ts), SIGKILLed as
// they are about to claim the message. PGlite: workers in this process that die there
// (dying-database.ts). A send's lease is 31 s (a Graph deadline and 30 s); instead of waiting, the
// test runs a killed run's lease out in pgboss.job. Supervise passes and sweep timers are an hour
// apart, so what brings the job back and gives the message up is what a worker does at its start.

import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueMessage } from '../../src/domain/send-message.ts';
import { startJobs } from '../../src/jobs/index.ts';
import type { Database, Principal } from '../../src/platform/db/database.ts';
import type { Queue } from '../../src/platform/queue/queue.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { exited, spawnUntil } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/db.ts';
import { dyingDatabase, isClaim } from '../helpers/dying-database.ts';
import { type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { connect, eventually, messageState } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const PHONE_ID = `4${process.pid}07`;
const WA_TOKEN = 'EAAG-wa-token-for-sweep-tests';
let seq = 0;
const phone = () => `+1628${String(5560000 + (++seq % 10000)).padStart(7, '0')}`;
const template = { name: 'welcome', language: 'en' };

let graph: FakeGraph;
let svc: TestService;
let owner: Session;
const cleanup: (() => Promise<unknown>)[] = [];

const env = (): Record<string, string> => ({
  META_GRAPH_URL: graph.url,
  META_INSTAGRAM_GRAPH_URL: graph.url,
  META_GRAPH_TIMEOUT_MS: '1000',
  SEND_FIRST_RETRY_SECONDS: '2',
  SEND_RETRY_BACKOFF_SECONDS: '1',
  SEND_RETRY_ATTEMPTS: '1',
  WORKER: 'off',
  WORKER_POLL_MS: '500',
  WORKER_SUPERVISE_SECONDS: '3600',
  WORKER_SWEEP_SECONDS: '3600',
});

beforeAll(async () => {
  graph = await startFakeGraph({ accounts: { [PHONE_ID]: { token: WA_TOKEN, channel: 'whatsapp' } } });
  svc = await startTestService(env());
  owner = await signUp(svc, 'Sweep');
  await setPlan(svc, owner, 'starter');
  await connect(svc, owner, 'whatsapp', PHONE_ID, WA_TOKEN);
});
afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo().catch(() => {});
  await svc?.stop();
  await graph?.close();
});

/** A message queued with its job and never attempted, as a request that died after its commit leaves it. */
async function queued(to: string) {
  const principal: Principal = {
    kind: 'user',
    userId: owner.user.id,
    claims: await svc.services.tokens.verify(owner.access_token),
  };
  const q = await queueMessage(svc.services, principal, { channel: 'whatsapp', to, template });
  return { id: q.message.id, jobId: q.jobId as string };
}

const job = async (id: string) =>
  (
    await svc.services.db.query<{ state: string; retry_count: number }>(
      "select state, retry_count from pgboss.job where name = 'send-message' and id = $1",
      [id],
    )
  )[0];

/** The killed run's lease (31 s) runs out: moved back in time instead of waited for. */
const runOutLease = (jobId: string) =>
  svc.services.db.query(
    `update pgboss.job set started_on = now() - make_interval(secs => expire_seconds + 1)
      where name = 'send-message' and id = $1 and state = 'active'`,
    [jobId],
  );

const childEnv = () => ({
  ...env(),
  DATABASE_URL: svc.databaseUrl as string,
  DATA_DIR: svc.dataDir,
  LOG_LEVEL: 'warn',
});

/** A worker in this process over `db` (the stand-in for `svc worker`, as in send-retries.test.ts). */
async function inProcessWorker(db: Database = svc.services.db): Promise<Queue> {
  const queue = await startJobs({ ...svc.services, db, log: pino({ level: 'silent' }) }, { work: true });
  cleanup.push(() => queue.stop({ timeoutMs: 500 }));
  return queue;
}

/** A worker that takes the message's job and is killed as it is about to claim the message. */
async function killedWorker(): Promise<void> {
  if (onPostgres()) {
    const script = path.join(import.meta.dirname, 'dying-sender.ts');
    const { child } = await spawnUntil(['--import', 'tsx', script], childEnv(), /stopped at the claim/);
    child.kill('SIGKILL');
    expect(await exited(child)).toBe('SIGKILL');
    return;
  }
  let stopped: () => void = () => {};
  const reached = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  await inProcessWorker(dyingDatabase(svc.services.db, { stopAt: isClaim, onStop: () => stopped() }).db);
  await reached;
}

/** A worker that lives: `svc worker` on PostgreSQL, one in this process on PGlite. */
async function healthyWorker(): Promise<void> {
  if (!onPostgres()) {
    await inProcessWorker();
    return;
  }
  const { child } = await spawnUntil(['worker'], childEnv(), /svc worker running/, { cli: true });
  cleanup.push(async () => {
    (child as ChildProcess).kill('SIGTERM');
    return exited(child);
  });
}

describe('a message whose job pg-boss failed', () => {
  it('retry limit 1, both runs cut off by killed workers: the message ends failed with the reason, and Meta never saw it', async () => {
    graph.reset();
    const { id, jobId } = await queued(phone());
    await killedWorker();
    expect(await job(jobId)).toEqual({ state: 'active', retry_count: 0 });
    await runOutLease(jobId);
    // The next worker takes the job back when it starts, runs it again, and is killed too.
    await killedWorker();
    expect(await job(jobId)).toEqual({ state: 'active', retry_count: 1 });
    await runOutLease(jobId);
    // The third worker's start returns that lease at the retry limit: pg-boss fails the job itself.
    await healthyWorker();
    const failed = await eventually(async () => {
      const m = await messageState(svc, id);
      return m?.status === 'failed' ? m : null;
    });
    expect((await job(jobId))?.state).toBe('failed');
    expect(failed.error).toMatchObject({ type: 'job_lost', gave_up: 'attempts' });
    expect(String(failed.error?.message)).toMatch(
      /runs were cut off .*: its lease ran out while a worker held it/,
    );
    expect(failed.provider_message_id).toBeNull();
    expect(graph.requests).toHaveLength(0);
    // What the sender sees: the message failed, with the reason.
    const [listed] = await svc.services.db.query<{ status: string }>(
      'select status from messages where id = $1',
      [id],
    );
    expect(listed?.status).toBe('failed');
  });

  it('an attempt still holding its claim is left to record its own outcome; once the claim has run out, the message is given up', async () => {
    const { id, jobId } = await queued(phone());
    // As pg-boss leaves a job whose run it presumed dead, while that run, merely slow, still holds
    // the message's claim and may yet hear Meta's answer.
    await svc.services.db.query(
      `update pgboss.job set state = 'failed', completed_on = now(), output = '{"value":{"message":"job timed out"}}'
        where name = 'send-message' and id = $1`,
      [jobId],
    );
    await svc.services.db.query(
      "update messages set sending_until = now() + interval '1 hour' where id = $1",
      [id],
    );
    const worker = await inProcessWorker();
    expect((await worker.sweep())['send-message']).toEqual({ requeued: 0, failed: 0 });
    expect((await messageState(svc, id))?.status).toBe('queued');
    // The attempt died without an answer: its claim runs out.
    await svc.services.db.query(
      "update messages set sending_until = now() - interval '1 second' where id = $1",
      [id],
    );
    expect((await worker.sweep())['send-message']).toEqual({ requeued: 0, failed: 1 });
    const m = await messageState(svc, id);
    expect(m?.status).toBe('failed');
    expect(m?.error).toMatchObject({ type: 'job_lost', gave_up: 'attempts' });
    expect(String(m?.error?.message)).toMatch(/job timed out/);
  });
});

describe('a message whose job is gone', () => {
  it('is sent once by the next worker, which enqueues it again when it sweeps', async () => {
    graph.reset();
    const to = phone();
    const { id, jobId } = await queued(to);
    // The queue lost the job (a database restored without its jobs, say).
    await svc.services.db.query("delete from pgboss.job where name = 'send-message' and id = $1", [jobId]);
    await inProcessWorker();
    const sent = await eventually(async () => {
      const m = await messageState(svc, id);
      return m?.status === 'sent' ? m : null;
    });
    expect(sent.provider_message_id).toMatch(/^wamid\./);
    // pg-boss marks the job completed after the handler returns, a moment after the message is sent.
    const done = await eventually(async () => {
      const j = await job(jobId);
      return j?.state === 'completed' ? j : null;
    });
    expect(done.state).toBe('completed');
    expect(graph.requests.map((q) => (q.body as { to?: string }).to)).toEqual([to.slice(1)]);
  });
});
