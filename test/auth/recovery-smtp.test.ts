// With SMTP_URL set, recovery mails go to the SMTP server (nodemailer) and nowhere else: no outbox
// file, and no log line carries the link or the code. A server that refuses a mail leaves the
// answer unchanged (the caller must not learn anything from it) and is logged without the secret.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authClient, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/** Just enough of an SMTP server to receive mail: every message's DATA, as sent. */
function fakeSmtp(opts: { refuseRecipient: (rcpt: string) => boolean }) {
  const messages: string[] = [];
  const server: Server = createServer((sock) => {
    let buffer = '';
    let inData = false;
    let message = '';
    sock.write('220 fake.example.test ESMTP\r\n');
    sock.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (let i = buffer.indexOf('\r\n'); i >= 0; i = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            messages.push(message);
            message = '';
            sock.write('250 2.0.0 queued\r\n');
          } else message += `${line.startsWith('..') ? line.slice(1) : line}\n`;
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') sock.write('250-fake.example.test\r\n250 8BITMIME\r\n');
        else if (verb === 'RCPT' && opts.refuseRecipient(line)) sock.write('550 5.1.1 no such mailbox\r\n');
        else if (verb === 'DATA') {
          inData = true;
          sock.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') sock.end('221 bye\r\n');
        else sock.write('250 OK\r\n');
      }
    });
    sock.on('error', () => {});
  });
  return { server, messages };
}

/** Quoted-printable, as nodemailer may encode a text body with long lines. */
const decodeQp = (s: string) =>
  s
    .replace(/=\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));

const smtp = fakeSmtp({ refuseRecipient: (line) => line.includes('refused-') });
let svc: TestService;
beforeAll(async () => {
  await new Promise<void>((resolve) => smtp.server.listen(0, '127.0.0.1', resolve));
  const { port } = smtp.server.address() as { port: number };
  svc = await startTestService({
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    MAIL_FROM: 'Acme Support <support@acme.example>',
  });
});
afterAll(async () => {
  await svc?.stop();
  await new Promise((r) => smtp.server.close(r));
});

const client = () => authClient(svc);

describe('recovery mail over SMTP', () => {
  it('delivers to the SMTP server from MAIL_FROM, writes no outbox, and logs neither link nor code', async () => {
    const me = await signUp(svc);
    expect((await client().resetPasswordForEmail(me.user.email)).error).toBeNull();
    await svc.services.mail.settled();
    const raw = smtp.messages.find((m) => m.includes(`To: ${me.user.email}`)) as string;
    expect(raw).toBeTruthy();
    expect(raw).toContain('From: Acme Support <support@acme.example>');
    const text = decodeQp(raw);
    const token = /verify\?token=([A-Za-z0-9_-]+)/.exec(text)?.[1] as string;
    const code = /code: (\d{6})/.exec(text)?.[1] as string;
    expect(token).toBeTruthy();
    expect(existsSync(path.join(svc.dataDir, 'outbox'))).toBe(false);
    expect(svc.logs()).not.toContain(token);
    expect(svc.logs()).not.toContain(`code: ${code}`);
    // The mail works: the code signs the person in.
    const { data, error } = await client().verifyOtp({ type: 'recovery', email: me.user.email, token: code });
    expect(error).toBeNull();
    expect(data.user?.id).toBe(me.user.id);
  });

  it('answers the same when the server refuses the mail, and logs the failure without the mail', async () => {
    const me = await signUp(svc, undefined, `refused-${Date.now()}@example.test`);
    const { data, error } = await client().resetPasswordForEmail(me.user.email);
    expect(error).toBeNull();
    expect(data).toEqual({});
    await svc.services.mail.settled();
    const failure = svc
      .logs()
      .split('\n')
      .find((l) => l.includes('mail not delivered'));
    expect(failure).toBeTruthy();
    expect(failure).not.toContain('verify?token=');
  });
});
