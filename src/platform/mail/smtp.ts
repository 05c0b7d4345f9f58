import type { Transporter } from 'nodemailer';
import type { Logger } from '../log.ts';
import type { Mailer } from './mailer.ts';

/**
 * Delivery through an SMTP server (`SMTP_URL`, e.g. `smtps://user:pass@smtp.example.com:465`).
 * Logs who a mail went to and the server's message id, never its text: it carries a secret.
 */
export function smtpMailer(url: string, from: string, log: Logger): Mailer {
  // Bounded waits: a stop waits for mails in flight, and a dead server must not hold it for minutes.
  // Settings in the URL's query (e.g. ?connectionTimeout=…) take precedence. nodemailer is loaded
  // with the first mail, not at start (docs/performance.md, issue 29).
  let transport: Promise<Transporter> | undefined;
  const open = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        url,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
      }),
    ));
  return {
    async send(mail) {
      const info = await (await open()).sendMail({
        from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
      });
      log.info({ mail: { to: mail.to, subject: mail.subject, message_id: info.messageId } }, 'mail sent');
    },
    async close() {
      (await transport)?.close();
    },
  };
}
