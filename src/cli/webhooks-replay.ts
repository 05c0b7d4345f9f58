import type { Config } from '../config.ts';
import { replayEvents } from '../domain/webhook-events.ts';
import { startJobs } from '../jobs/index.ts';
import { createLogger } from '../platform/log.ts';
import { loadSecrets } from '../platform/secrets.ts';
import { openForCommand } from './running-service.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `svc webhooks replay <event id>|--failed`: puts webhook events back to pending and enqueues
 * their processing again (docs/webhooks.md). `--failed` takes every failed and rejected event.
 * On PostgreSQL it runs beside the service; on the embedded database it needs the service
 * stopped (it opens the database under the data directory's lock), and the next start works them.
 * Prints `{"replayed": [ids]}`.
 */
export async function replayCommand(config: Config, arg: string | undefined): Promise<number> {
  if (!arg || (arg !== '--failed' && !UUID.test(arg))) {
    process.stderr.write('usage: svc webhooks replay <event id>|--failed\n');
    return 2;
  }
  const log = createLogger(config.logLevel);
  const db = await openForCommand(config, 'webhooks replay');
  try {
    const secrets = loadSecrets(config.dataDir, config.secretsKey);
    const queue = await startJobs({ config, db, log, now: () => new Date(), secrets }, { work: false });
    try {
      const replayed = await replayEvents(db, queue, arg === '--failed' ? { failed: true } : { id: arg });
      process.stdout.write(`${JSON.stringify({ replayed })}\n`);
      if (arg !== '--failed' && replayed.length === 0) {
        process.stderr.write('no such event, or it is already pending\n');
        return 1;
      }
      return 0;
    } finally {
      await queue.stop({ timeoutMs: 1000 });
    }
  } finally {
    await db.close();
  }
}
