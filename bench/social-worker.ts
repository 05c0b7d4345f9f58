// A publisher as bench/social-publish.ts measures it, in a process of its own: `svc worker`'s own
// start (startWorker: its pool, the queue, every job, WORKER_CONCURRENCY slots), configured from
// the environment the bench passes (DATABASE_URL, DATA_DIR with the secrets key the service wrote,
// META_GRAPH_URL: the bench's fake), logging at info to stdout like a deployment (the bench sends
// stdout to /dev/null). It tells its parent it runs, and stops on SIGTERM.

import { startWorker } from '../src/cli/worker.ts';
import { loadConfig } from '../src/config.ts';

const config = loadConfig(process.env);
const stop = await startWorker(config);
process.once('SIGTERM', async () => {
  await stop();
  process.exit(0);
});
process.send?.({ pid: process.pid });
