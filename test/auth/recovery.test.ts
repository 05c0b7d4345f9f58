// Password recovery as GoTrue has it, driven by @supabase/auth-js over real HTTP: the mail (read
// from the development outbox) carries a link and a code; either signs the person in once, and
// PUT /user then sets the new password. An unknown email gets the same answer as a known one.
import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { authClient, call, signIn, signUp } from '../helpers/http.ts';
import { codeIn, lastMailTo, mailsTo } from '../helpers/outbox.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

const SITE = 'http://dashboard.example.test';
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    SITE_URL: SITE,
    URI_ALLOW_LIST: 'http://app.example.test/welcome, http://preview.example.test/*',
    RECOVER_MAX_PER_EMAIL: '3',
    LOGIN_MAX_FAILURES_PER_EMAIL: '2',
  });
});
afterAll(() => svc?.stop());

const client = () => authClient(svc);

/** Follows a mail's link as a browser would, without following the redirect. */
const openLink = async (link: string) => {
  const res = await fetch(link, { redirect: 'manual' });
  const location = res.headers.get('location') ?? '';
  const url = new URL(location);
  return {
    status: res.status,
    url,
    fragment: new URLSearchParams(url.hash.slice(1)),
    cacheControl: res.headers.get('cache-control'),
  };
};

describe('resetPasswordForEmail and the link', () => {
  it('mails a link that signs in once, redirects with the session in the fragment, and lets PUT /user set a new password', async () => {
    const me = await signUp(svc, 'Forgetful Ltd');
    const { data, error } = await client().resetPasswordForEmail(me.user.email, {
      redirectTo: 'http://app.example.test/welcome',
    });
    expect(error).toBeNull();
    expect(data).toEqual({});

    const mail = await lastMailTo(svc, me.user.email);
    expect(mail.subject).toBe('Reset your password');
    expect(mail.text).toContain(mail.link);
    const link = new URL(mail.link as string);
    expect(`${link.origin}${link.pathname}`).toBe(`${svc.url}/auth/v1/verify`);
    expect(link.searchParams.get('type')).toBe('recovery');

    // A link checker's HEAD does not use it up; then a browser opens it, with no apikey header.
    const head = await fetch(mail.link as string, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(303);
    expect(head.headers.get('location')).not.toContain('access_token');
    const opened = await openLink(mail.link as string);
    expect(opened.status).toBe(303);
    expect(opened.cacheControl).toBe('no-store');
    expect(`${opened.url.origin}${opened.url.pathname}`).toBe('http://app.example.test/welcome');
    expect(opened.fragment.get('type')).toBe('recovery');
    expect(opened.fragment.get('token_type')).toBe('bearer');
    expect(Number(opened.fragment.get('expires_in'))).toBe(3600);
    expect(Number(opened.fragment.get('expires_at'))).toBeGreaterThan(Date.now() / 1000);
    const accessToken = opened.fragment.get('access_token') as string;
    expect(opened.fragment.get('refresh_token')).toBeTruthy();

    // The recovery session sets a new password; the old one stops working.
    const auth = client();
    const { data: user } = await auth.getUser(accessToken);
    expect(user.user?.id).toBe(me.user.id);
    const put = await call(svc, 'PUT', '/auth/v1/user', {
      token: accessToken,
      body: { password: 'brand-new-pass' },
    });
    expect(put.status).toBe(200);
    expect((await signIn(svc, me.user.email, 'brand-new-pass')).user.id).toBe(me.user.id);
    const old = await call(svc, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email: me.user.email, password: 'password-8' },
    });
    expect(old.status).toBe(400);

    // Used once: the same link now lands on the site with GoTrue's error in the fragment.
    const again = await openLink(mail.link as string);
    expect(again.status).toBe(303);
    expect(again.fragment.get('error')).toBe('access_denied');
    expect(again.fragment.get('error_code')).toBe('otp_expired');
    expect(again.fragment.get('error_description')).toBeTruthy();
    expect(again.fragment.get('access_token')).toBeNull();
  });

  it('answers an unknown email exactly like a known one, and mails nothing', async () => {
    const nobody = uniqueEmail('nobody');
    const known = await signUp(svc);
    const a = await call(svc, 'POST', '/auth/v1/recover', { body: { email: nobody } });
    const b = await call(svc, 'POST', '/auth/v1/recover', { body: { email: known.user.email } });
    expect([a.status, a.json]).toEqual([200, {}]);
    expect([b.status, b.json]).toEqual([200, {}]);
    const { error } = await client().resetPasswordForEmail(nobody);
    expect(error).toBeNull();
    expect(await mailsTo(svc, nobody)).toEqual([]);
    expect(await mailsTo(svc, known.user.email)).toHaveLength(1);
  });

  it('redirects to the site URL when redirect_to is not on the allow list', async () => {
    const me = await signUp(svc);
    for (const evil of [
      'https://evil.example.com/steal',
      'http://app.example.test/other',
      'javascript:alert(1)',
    ]) {
      await client().resetPasswordForEmail(me.user.email, { redirectTo: evil });
      const mail = await lastMailTo(svc, me.user.email);
      // Even a link edited by hand to name another page goes to the site.
      const link = new URL(mail.link as string);
      link.searchParams.set('redirect_to', evil);
      const opened = await openLink(link.toString());
      expect(`${opened.url.origin}${opened.url.pathname}`).toBe(`${SITE}/`);
      expect(opened.fragment.get('access_token')).toBeTruthy();
    }
  });

  it('allows a prefix entry of the allow list', async () => {
    const me = await signUp(svc);
    await client().resetPasswordForEmail(me.user.email, {
      redirectTo: 'http://preview.example.test/pr-7/reset',
    });
    const opened = await openLink((await lastMailTo(svc, me.user.email)).link as string);
    expect(`${opened.url.origin}${opened.url.pathname}`).toBe('http://preview.example.test/pr-7/reset');
  });

  it('limits recovery mails per email, whether or not the account exists', async () => {
    for (const email of [(await signUp(svc)).user.email, uniqueEmail('ghost')]) {
      for (let i = 0; i < 3; i++)
        expect((await call(svc, 'POST', '/auth/v1/recover', { body: { email } })).status).toBe(200);
      const over = await call(svc, 'POST', '/auth/v1/recover', { body: { email } });
      expect(over.status).toBe(429);
      expect(over.json.error).toBe('rate_limit_exceeded');
      expect(over.headers.get('retry-after')).toBeTruthy();
    }
  });
});

describe('verifyOtp with the code of the same mail', () => {
  it('signs in with the code once; a wrong code, a used code and a newer mail refuse with otp_expired', async () => {
    const me = await signUp(svc);
    await client().resetPasswordForEmail(me.user.email);
    const first = await lastMailTo(svc, me.user.email);
    await client().resetPasswordForEmail(me.user.email);
    const second = await lastMailTo(svc, me.user.email);
    expect(second.link).not.toBe(first.link);

    // Only the newest mail works.
    const stale = await openLink(first.link as string);
    expect(stale.fragment.get('error_code')).toBe('otp_expired');

    const wrongCode = codeIn(second) === '000000' ? '000001' : '000000';
    const wrong = await client().verifyOtp({ type: 'recovery', email: me.user.email, token: wrongCode });
    expect(wrong.error?.code).toBe('otp_expired');
    expect(wrong.error?.status).toBe(403);
    expect(wrong.data.session).toBeNull();

    const ok = await client().verifyOtp({ type: 'recovery', email: me.user.email, token: codeIn(second) });
    expect(ok.error).toBeNull();
    expect(ok.data.user?.id).toBe(me.user.id);
    expect(ok.data.session?.access_token).toBeTruthy();

    const reused = await client().verifyOtp({
      type: 'recovery',
      email: me.user.email,
      token: codeIn(second),
    });
    expect(reused.error?.code).toBe('otp_expired');
    // The link of the same mail went with the code.
    expect((await openLink(second.link as string)).fragment.get('error_code')).toBe('otp_expired');
  });

  it('accepts the link token as token_hash', async () => {
    const me = await signUp(svc);
    await client().resetPasswordForEmail(me.user.email);
    const token = new URL((await lastMailTo(svc, me.user.email)).link as string).searchParams.get(
      'token',
    ) as string;
    const { data, error } = await client().verifyOtp({ type: 'recovery', token_hash: token });
    expect(error).toBeNull();
    expect(data.session?.user.id).toBe(me.user.id);
    expect((await client().verifyOtp({ type: 'recovery', token_hash: token })).error?.code).toBe(
      'otp_expired',
    );
  });

  it('retires a token after five wrong codes, so the right one no longer works', async () => {
    const me = await signUp(svc);
    await client().resetPasswordForEmail(me.user.email);
    const right = codeIn(await lastMailTo(svc, me.user.email));
    const wrong = right === '111111' ? '222222' : '111111';
    for (let i = 0; i < 5; i++) {
      const r = await client().verifyOtp({ type: 'recovery', email: me.user.email, token: wrong });
      expect(r.error?.code).toBe('otp_expired');
    }
    const late = await client().verifyOtp({ type: 'recovery', email: me.user.email, token: right });
    expect(late.error?.code).toBe('otp_expired');
  });

  it('refuses an expired token', async () => {
    const me = await signUp(svc);
    await client().resetPasswordForEmail(me.user.email);
    const mail = await lastMailTo(svc, me.user.email);
    await svc.services.db.query(
      "update auth.one_time_tokens set expires_at = now() - interval '1 second' where user_id = $1",
      [me.user.id],
    );
    const r = await client().verifyOtp({ type: 'recovery', email: me.user.email, token: codeIn(mail) });
    expect(r.error?.code).toBe('otp_expired');
    expect((await openLink(mail.link as string)).fragment.get('error_code')).toBe('otp_expired');
  });

  it('refuses an unknown email and a malformed code', async () => {
    const r = await client().verifyOtp({ type: 'recovery', email: uniqueEmail('nobody'), token: '123456' });
    expect(r.error?.code).toBe('otp_expired');
    const bad = await call(svc, 'POST', '/auth/v1/verify', {
      body: { type: 'recovery', email: uniqueEmail(), token: 'abc' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('validation_error');
  });
});

describe('an account locked by guessed passwords', () => {
  it('is unlocked by a recovery: its owner sets a new password and signs in at once', async () => {
    const me = await signUp(svc);
    const guess = () =>
      call(svc, 'POST', '/auth/v1/token?grant_type=password', {
        body: { email: me.user.email, password: 'guess-123' },
      });
    await guess();
    await guess();
    expect((await guess()).status).toBe(429);
    await client().resetPasswordForEmail(me.user.email);
    const { data } = await client().verifyOtp({
      type: 'recovery',
      email: me.user.email,
      token: codeIn(await lastMailTo(svc, me.user.email)),
    });
    const put = await call(svc, 'PUT', '/auth/v1/user', {
      token: data.session?.access_token,
      body: { password: 'after-the-lock' },
    });
    expect(put.status).toBe(200);
    expect((await signIn(svc, me.user.email, 'after-the-lock')).user.id).toBe(me.user.id);
  });
});

describe('the development outbox', () => {
  it('writes each mail as a private JSON file under DATA_DIR/outbox and logs its link', async () => {
    const me = await signUp(svc);
    await call(svc, 'POST', '/auth/v1/recover', { body: { email: me.user.email } });
    const mail = await lastMailTo(svc, me.user.email);
    expect(mail.from).toBe('svc <no-reply@localhost>');
    expect(svc.logs()).toContain(mail.link);
    const dir = path.join(svc.dataDir, 'outbox');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe('mail configuration', () => {
  it('refuses at start an allow-list entry that is no URL and an SMTP_URL of another scheme', () => {
    expect(() => loadConfig({ URI_ALLOW_LIST: 'https://ok.example/*, not a url' })).toThrow(/URI_ALLOW_LIST/);
    expect(() => loadConfig({ SMTP_URL: 'http://mail.example:25' })).toThrow(ConfigError);
    expect(
      loadConfig({ URI_ALLOW_LIST: ' https://a.example/x , https://b.example/* ' }).uriAllowList,
    ).toEqual(['https://a.example/x', 'https://b.example/*']);
  });
});
