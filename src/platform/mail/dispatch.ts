import path from 'node:path';
import type { Logger } from '../log.ts';
import type { Mail, Mailer } from './mailer.ts';
import { outboxMailer } from './outbox.ts';
import { smtpMailer } from './smtp.ts';

/**
 * What routes use to send mail. `post` returns at once: a request that answers the same whether
 * or not an account exists must not take longer when a mail goes out (the mail server's latency
 * would tell). A failed delivery is logged (without the mail's text). `settled` waits for every
 * mail posted so far: graceful stop, and tests that read the outbox.
 */
export type MailDispatch = {
  post(mail: Mail): void;
  settled(): Promise<void>;
  close(): Promise<void>;
};

export function dispatchMail(mailer: Mailer, log: Logger): MailDispatch {
  const pending = new Set<Promise<void>>();
  const settled = async () => {
    while (pending.size) await Promise.allSettled([...pending]);
  };
  return {
    post(mail) {
      const p = mailer
        .send(mail)
        .catch((err: Error) =>
          log.error(
            { err: { name: err.name, message: err.message }, mail: { to: mail.to } },
            'mail not delivered',
          ),
        )
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    settled,
    async close() {
      await settled();
      await mailer.close();
    },
  };
}

/** SMTP when `SMTP_URL` is set, else the development outbox in `DATA_DIR/outbox`. */
export function openMail(
  config: { dataDir: string; mail: { smtpUrl: string | undefined; from: string } },
  log: Logger,
): MailDispatch {
  const mailer = config.mail.smtpUrl
    ? smtpMailer(config.mail.smtpUrl, config.mail.from, log)
    : outboxMailer(path.join(config.dataDir, 'outbox'), config.mail.from, log);
  return dispatchMail(mailer, log);
}
