import { type Logger, logFailure } from '../platform/log.ts';
import { abandonRunsInFlight } from '../platform/queue/pg-boss.ts';

// What a process that runs jobs (`svc worker`, `svc start` with its worker inline) does when an
// exception escapes everything: a throw in a timer's or an emitter's callback, outside any
// handler's try, or an unhandled rejection (which Node raises as one). The process's state is then
// unknown, so it exits as Node would by default (code 1) and its supervisor restarts it; but first
// its queues record the crash on the runs this process holds (Queue.abandon), so each counts as an
// attempt now, with the error, instead of when its lease runs out. A job that crashes every worker
// it reaches therefore ends `failed` after its retry limit with its error recorded, and the sweep
// gives its work up (docs/jobs.md). Out of memory ends a process with no such chance: its runs
// count when their leases run out.

/** At most this long to record the crash; a database the crash left mid-transaction may never answer. */
const RECORD_MS = 2000;

/** Installed before anything runs: a job taken the moment the worker starts may be the poison. */
export function exitOnCrash(log: Logger): void {
  let crashed = false;
  process.on('uncaughtException', (err, origin) => {
    if (crashed) return; // another one while recording the first: its exit is on its way
    crashed = true;
    process.exitCode = 1;
    logFailure(log, err, { origin }, 'uncaught exception: the process stops');
    // Called before any await: abandon reads which run the error came from off the current context.
    const recorded = abandonRunsInFlight(err).catch((e) =>
      logFailure(log, e, {}, 'could not record the crash on the jobs in flight'),
    );
    const late = new Promise((resolve) => setTimeout(resolve, RECORD_MS));
    void Promise.race([recorded, late]).then(() => log.flush(() => process.exit(1)));
  });
}
