import type { MakeJob } from '../../src/jobs/deps.ts';
import type { JobPolicy } from '../../src/platform/queue/queue.ts';
import { ONE_ATTEMPT, workJob } from '../helpers/work-rows.ts';

// The two test jobs of the worker processes test/platform/queue-crash.test.ts starts
// (poison-worker.ts), about rows of public.test_work (work-rows.ts): `test-poison` throws in a
// timer, outside its handler and any try, the uncaught exception that ends a process;
// `test-healthy` just marks its row done.

export const POISON = 'test-poison';
export const HEALTHY = 'test-healthy';
export const POISON_ERROR = 'poison: thrown in a timer, outside the handler';

const policy = (attempts: number): JobPolicy => ({ ...ONE_ATTEMPT, attempts, leaseSeconds: 30 });

/** One attempt (a retry limit of 1: two runs). Its run never ends: the crash ends it. */
export const poisonJob: MakeJob = ({ db }) =>
  workJob(
    POISON,
    db,
    () => {
      setTimeout(() => {
        throw new Error(POISON_ERROR);
      }, 20);
      return new Promise(() => {});
    },
    policy(1),
  ).def;

/** Enough attempts to outlive the crashes it shares a worker with. */
export const healthyJob: MakeJob = ({ db }) => workJob(HEALTHY, db, async () => {}, policy(10)).def;
