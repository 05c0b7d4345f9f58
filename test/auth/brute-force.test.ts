// Brute-force guards on /auth/v1: per-address limits on sign-in, sign-up and recovery mails, and
// the per-account lock. The limits are asserted exactly: each test speaks from an address of its own (the service
// trusts X-Forwarded-For from the loopback proxy here), so no counter carries over from another
// test, and a limit one higher or lower than configured fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session } from '../helpers/http.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

const LOGIN_MAX_PER_IP = 12;
const LOGIN_MAX_FAILURES_PER_EMAIL = 3;
const SIGNUP_MAX_PER_IP = 4;
const RECOVER_MAX_PER_IP = 4;

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    LOGIN_MAX_FAILURES_PER_EMAIL: String(LOGIN_MAX_FAILURES_PER_EMAIL),
    LOGIN_MAX_PER_IP: String(LOGIN_MAX_PER_IP),
    SIGNUP_MAX_PER_IP: String(SIGNUP_MAX_PER_IP),
    RECOVER_MAX_PER_IP: String(RECOVER_MAX_PER_IP),
    TRUST_PROXY: '127.0.0.1,::1',
  });
});
afterAll(() => svc?.stop());

let addresses = 0;
/** A client address no other test has used: its counters start at zero. */
const freshAddress = () => `198.51.100.${++addresses}`;

const login = (email: string, password: string, from: string) =>
  call(svc, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password },
    headers: { 'x-forwarded-for': from },
  });
const signUpFrom = (from: string, email = uniqueEmail()) =>
  call(svc, 'POST', '/auth/v1/signup', {
    body: { email, password: 'password-8' },
    headers: { 'x-forwarded-for': from },
  });
/** An account made from an address of its own, so it costs no test its sign-up budget. */
const account = async () => (await signUpFrom(freshAddress())).json as Session;

describe('brute-force guards on sign-in', () => {
  it('locks an account after repeated failures, even against the right password, with Retry-After', async () => {
    const { user } = await account();
    const from = freshAddress();
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_EMAIL; i++)
      expect((await login(user.email, `wrong-${i}-pass`, from)).status).toBe(400);
    const locked = await login(user.email, 'password-8', from);
    expect(locked.status).toBe(429);
    expect(locked.json.error).toBe('rate_limit_exceeded');
    expect(locked.json.message).toMatch(/for this account/);
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(locked.json.message).toContain(`${retryAfter} seconds`);
    // The lock is the account's, not the address's: another address is refused too.
    expect((await login(user.email, 'password-8', freshAddress())).status).toBe(429);
  });

  it('one failure short of the lock, the right password still signs in', async () => {
    const { user } = await account();
    const from = freshAddress();
    for (let i = 1; i < LOGIN_MAX_FAILURES_PER_EMAIL; i++)
      expect((await login(user.email, `wrong-${i}-pass`, from)).status).toBe(400);
    expect((await login(user.email, 'password-8', from)).status).toBe(200);
  });

  it('counts parallel guesses before checking them, so they cannot slip past the lock', async () => {
    const { user } = await account();
    // From ten addresses at once: the account's lock, not an address limit, must stop them.
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => login(user.email, `guess-${i}-pass`, freshAddress())),
    );
    const checked = results.filter((r) => r.status === 400).length;
    expect(checked).toBe(LOGIN_MAX_FAILURES_PER_EMAIL);
    expect(results.filter((r) => r.status === 429).length).toBe(10 - checked);
  });

  it('a success clears the failure count', async () => {
    const { user } = await account();
    const from = freshAddress();
    await login(user.email, 'wrong-1-pass', from);
    await login(user.email, 'wrong-2-pass', from);
    expect((await login(user.email, 'password-8', from)).status).toBe(200);
    await login(user.email, 'wrong-3-pass', from);
    await login(user.email, 'wrong-4-pass', from);
    expect((await login(user.email, 'password-8', from)).status).toBe(200);
  });

  it('allows exactly LOGIN_MAX_PER_IP attempts from one address, successes included, across many emails', async () => {
    const { user } = await account();
    const from = freshAddress();
    const statuses: number[] = [];
    for (let i = 1; i < LOGIN_MAX_PER_IP; i++)
      statuses.push((await login(uniqueEmail('spray'), 'whatever-pass', from)).status);
    statuses.push((await login(user.email, 'password-8', from)).status);
    expect(statuses).toEqual([...Array(LOGIN_MAX_PER_IP - 1).fill(400), 200]);
    const over = await login(user.email, 'password-8', from);
    expect(over.status).toBe(429);
    expect(over.json.message).toMatch(/from this address/);
    // Another address is not affected.
    expect((await login(user.email, 'password-8', freshAddress())).status).toBe(200);
  });
});

describe('sign-up limits', () => {
  it('allows exactly SIGNUP_MAX_PER_IP sign-ups from one address, then 429 with Retry-After', async () => {
    const from = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < SIGNUP_MAX_PER_IP; i++) statuses.push((await signUpFrom(from)).status);
    expect(statuses).toEqual(Array(SIGNUP_MAX_PER_IP).fill(200));
    const email = uniqueEmail();
    const over = await signUpFrom(from, email);
    expect(over.status).toBe(429);
    expect(over.json.message).toMatch(/sign-ups from this address/);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // Nothing was created: the same email signs up from another address.
    expect((await signUpFrom(freshAddress(), email)).status).toBe(200);
  });
});

describe('recovery limits', () => {
  it('sends exactly RECOVER_MAX_PER_IP recovery mails from one address, whatever the emails, then 429', async () => {
    const from = freshAddress();
    const recover = () =>
      call(svc, 'POST', '/auth/v1/recover', {
        body: { email: uniqueEmail('forgetful') },
        headers: { 'x-forwarded-for': from },
      });
    const statuses: number[] = [];
    for (let i = 0; i <= RECOVER_MAX_PER_IP; i++) statuses.push((await recover()).status);
    expect(statuses).toEqual([...Array(RECOVER_MAX_PER_IP).fill(200), 429]);
  });
});
