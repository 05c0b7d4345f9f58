import path from 'node:path';
import type { Logger } from '../log.ts';
import type { Mail, Mailer } from './mailer.ts';
import { outboxMailer } from './outbox.ts';
import { smtpMailer } from './smtp.ts';

/**
 * What routes use to send mail. `post` returns at once: a request that answers the same whether
 * or not an account exists must not take longer when a mail goes out (the mail server's latency
 * would tell). `later` runs work that ends in a mail after the answer, for the same reason (the
 * lookup and the token write take longer for a registered email). A failed delivery or task is
 * logged (without the mail's text). `settled` waits for every mail and task posted so far, and for
 * the mails those tasks post: graceful stop, and tests that read the outbox.
 */
export type MailDispatch = {
  post(mail: Mail): void;
  later(what: string, work: () => Promise<void>): void;
  settled(): Promise<void>;
  close(): Promise<void>;
};

export function dispatchMail(mailer: Mailer, log: Logger): MailDispatch {
  const pending = new Set<Promise<void>>();
  const settled = async () => {
    while (pending.size) await Promise.allSettled([...pending]);
  };
  const track = (work: Promise<void>, onError: (err: Error) => void) => {
    const p = work.catch(onError).finally(() => pending.delete(p));
    pending.add(p);
  };
  return {
    post(mail) {
      track(mailer.send(mail), (err) =>
        log.error(
          { err: { name: err.name, message: err.message }, mail: { to: mail.to } },
          'mail not delivered',
        ),
      );
    },
    later(what, work) {
      // Started on the next turn, so the answer never waits for any of it.
      track(new Promise<void>((resolve) => setImmediate(resolve)).then(work), (err) =>
        log.error({ err: { name: err.name, message: err.message }, task: what }, 'mail task failed'),
      );
    },
    settled,
    async close() {
      await settled();
      await mailer.close();
    },
  };
}

/**
 * SMTP when `SMTP_URL` is set. Without it, the development outbox in `DATA_DIR/outbox` on the
 * embedded database only: with `DATABASE_URL` the service is a deployment real people use, where
 * an outbox (and its log line with the link) would leak live recovery and invitation links into
 * files and logs. There, mail is disabled: every send fails and is logged as undelivered
 * (recipient only), and start-up warns.
 */
export function openMail(
  config: {
    dataDir: string;
    databaseUrl: string | undefined;
    mail: { smtpUrl: string | undefined; from: string };
  },
  log: Logger,
): MailDispatch {
  if (config.mail.smtpUrl) return dispatchMail(smtpMailer(config.mail.smtpUrl, config.mail.from, log), log);
  if (config.databaseUrl) {
    log.warn('mail is disabled: set SMTP_URL (recovery and invitation mails are not sent)');
    return dispatchMail(disabledMailer(), log);
  }
  return dispatchMail(outboxMailer(path.join(config.dataDir, 'outbox'), config.mail.from, log), log);
}

/** Refuses every mail, so each attempt is logged as undelivered without its content. */
function disabledMailer(): Mailer {
  return {
    async send() {
      throw new Error('mail is disabled: set SMTP_URL');
    },
    async close() {},
  };
}
