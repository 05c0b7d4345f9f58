// One interface over the ways a mail leaves: SMTP in production, a file outbox in development.
// Routes never wait for delivery (see dispatch.ts); adapters only deliver.

export type Mail = {
  to: string;
  subject: string;
  text: string;
  /**
   * The link the mail is about. Only the development outbox logs it (so a developer can click
   * it); a real delivery never writes it anywhere but into the mail.
   */
  link?: string;
};

export interface Mailer {
  /** Delivers one mail; rejects when the server refuses it. */
  send(mail: Mail): Promise<void>;
  close(): Promise<void>;
}
