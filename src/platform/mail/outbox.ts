import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../log.ts';
import type { Mailer } from './mailer.ts';

/**
 * Development delivery, used when no SMTP_URL is set: each mail becomes a JSON file in `dir`
 * (`<timestamp>-<sequence>-<id>.json`, mode 0600) and an info log line with its link, so whoever runs the
 * service can follow a recovery link without a mail server. Not for production: the links are
 * live credentials, and here they sit in a file and in the log.
 */
export function outboxMailer(dir: string, from: string, log: Logger): Mailer {
  let sequence = 0;
  return {
    async send(mail) {
      // Named before any await, so names sort in the order mails were sent, even within a millisecond.
      const at = new Date();
      const seq = String(++sequence % 1e6).padStart(6, '0');
      const file = path.join(dir, `${at.toISOString().replace(/[:.]/g, '-')}-${seq}-${randomUUID()}.json`);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const body = { from, ...mail, created_at: at.toISOString() };
      await writeFile(file, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
      log.info(
        { mail: { to: mail.to, subject: mail.subject, link: mail.link }, file },
        'mail written to the outbox',
      );
    },
    async close() {},
  };
}
