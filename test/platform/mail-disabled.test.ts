// A deployment (DATABASE_URL set) without SMTP_URL sends no mail at all: no outbox file and no log
// line carrying a recovery or invitation link, which are live credentials. It says so at start,
// and each mail it could not send is logged as undelivered with its recipient only. The answers
// stay as they are (a recovery request is still 200 {} for everyone).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authClient, call, signUp } from '../helpers/http.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  // The test hands the service its database; DATABASE_URL only says "this is a deployment".
  svc = await startTestService({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/unused' });
});
afterAll(() => svc?.stop());

const lines = (): Record<string, unknown>[] => svc.logLines();

describe('DATABASE_URL without SMTP_URL', () => {
  it('warns at start that mail is disabled', () => {
    expect(lines()).toContainEqual(
      expect.objectContaining({ msg: expect.stringMatching(/^mail is disabled: set SMTP_URL/) }),
    );
  });

  it('writes no outbox and logs no link for a recovery or an invitation, only that the mail was not delivered', async () => {
    const me = await signUp(svc, 'Deployed Co');
    const { error } = await authClient(svc).resetPasswordForEmail(me.user.email);
    expect(error).toBeNull();
    const invitee = uniqueEmail('invitee');
    const invited = await call(svc, 'POST', '/functions/v1/organization-members', {
      token: me.access_token,
      body: { email: invitee, role: 'member' },
    });
    expect(invited.status).toBe(201);
    await svc.services.mail.settled();

    expect(existsSync(path.join(svc.dataDir, 'outbox'))).toBe(false);
    const logs = svc.logs();
    expect(logs).not.toContain('/auth/v1/verify');
    expect(logs).not.toContain('token=');
    expect(logs).not.toContain('/invitations#');
    const undelivered = lines().filter((l) => l.msg === 'mail not delivered');
    expect(undelivered.map((l) => l.mail)).toEqual(
      expect.arrayContaining([{ to: me.user.email }, { to: invitee }]),
    );
    for (const l of undelivered) expect(l.err).toMatchObject({ message: 'mail is disabled: set SMTP_URL' });
  });
});
