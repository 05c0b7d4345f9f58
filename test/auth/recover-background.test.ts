// POST /auth/v1/recover answers before it looks the email up: the token write happens only for a
// registered email, and its time told who has an account (11.3 ms against 9.7 ms). The lookup, the
// token and the mail run after the answer, and a graceful stop waits for them.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signUp } from '../helpers/http.ts';
import { lastMailTo } from '../helpers/outbox.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.stop());

describe('POST /auth/v1/recover', () => {
  it('answers a registered email while the token table is locked, and mails once it is free', async () => {
    const me = await signUp(svc);
    let release = () => {};
    let locked = () => {};
    const held = new Promise<void>((r) => {
      locked = r;
    });
    // Nothing on the answer's path may wait for this lock (before, the token was written first).
    const holder = svc.services.db.transaction(async (tx) => {
      await tx.query('lock table auth.one_time_tokens in exclusive mode');
      locked();
      await new Promise<void>((r) => {
        release = r;
      });
    });
    await held;
    const answer = await call(svc, 'POST', '/auth/v1/recover', { body: { email: me.user.email } });
    expect([answer.status, answer.json]).toEqual([200, {}]);
    release();
    await holder;
    const mail = await lastMailTo(svc, me.user.email);
    expect(mail.subject).toBe('Reset your password');
  });

  it('a graceful stop right after the answer still sends the mail', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-recover-stop-'));
    try {
      const own = await startTestService({}, { dataDir: dir });
      const me = await signUp(own);
      const answer = await call(own, 'POST', '/auth/v1/recover', { body: { email: me.user.email } });
      expect(answer.status).toBe(200);
      await own.stop();
      const outbox = path.join(dir, 'outbox');
      const mails = readdirSync(outbox).map((f) => JSON.parse(readFileSync(path.join(outbox, f), 'utf8')));
      expect(mails).toEqual([expect.objectContaining({ to: me.user.email, subject: 'Reset your password' })]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
