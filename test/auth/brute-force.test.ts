// Brute-force guards on /auth/v1: per-address limits on sign-in, sign-up and recovery mails, the
// lock of one address out of one account after failed sign-ins (a stranger never locks the owner
// out), and the account's ceiling across all addresses. The limits are asserted exactly: each test speaks from an address of its own (the service
// trusts X-Forwarded-For from the loopback proxy here), so no counter carries over from another
// test, and a limit one higher or lower than configured fails.
import { AuthClient } from '@supabase/auth-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session } from '../helpers/http.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

const LOGIN_MAX_PER_IP = 16;
const LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP = 3;
const LOGIN_MAX_FAILURES_PER_EMAIL = 6;
const SIGNUP_MAX_PER_IP = 4;
const RECOVER_MAX_PER_IP = 4;

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP: String(LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP),
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
/** @supabase/auth-js as a browser at `from` uses it (the loopback proxy passes its address on). */
const authFrom = (from: string) =>
  new AuthClient({
    url: `${svc.url}/auth/v1`,
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${svc.anonKey}`, 'x-forwarded-for': from },
    persistSession: false,
    autoRefreshToken: false,
  });
/** An account made from an address of its own, so it costs no test its sign-up budget. */
const account = async () => (await signUpFrom(freshAddress())).json as Session;

describe('brute-force guards on sign-in', () => {
  it("a stranger's failures lock the stranger's address out of the account, never the owner signing in elsewhere", async () => {
    const { user } = await account();
    const stranger = freshAddress();
    // Ten guesses from one address: the first LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP are checked, the rest refused.
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await login(user.email, `wrong-${i}-pass`, stranger)).status);
    expect(statuses).toEqual([
      ...Array(LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP).fill(400),
      ...Array(10 - LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP).fill(429),
    ]);
    // The owner, at home, signs in with auth-js as the dashboard does.
    const { data, error } = await authFrom(freshAddress()).signInWithPassword({
      email: user.email,
      password: 'password-8',
    });
    expect(error).toBeNull();
    expect(data.session?.access_token).toEqual(expect.any(String));
    expect(data.user?.email).toBe(user.email);
    // The stranger's address stays locked out of that account, even with the right password.
    const locked = await login(user.email, 'password-8', stranger);
    expect(locked.status).toBe(429);
    expect(locked.json.error).toBe('rate_limit_exceeded');
    expect(locked.json.message).toMatch(/for this account from this address/);
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(locked.json.message).toContain(`${retryAfter} seconds`);
    const viaClient = await authFrom(stranger).signInWithPassword({
      email: user.email,
      password: 'password-8',
    });
    expect(viaClient.error?.status).toBe(429);
    expect(viaClient.data.session).toBeNull();
    // ...but not out of other accounts: a lock is one account's, from one address.
    const other = await account();
    expect((await login(other.user.email, 'password-8', stranger)).status).toBe(200);
  });

  it('many addresses together hit the account ceiling, which refuses every address, the owner included', async () => {
    const { user } = await account();
    // Two guesses from each address: under the per-address lock, over the account's ceiling.
    const spread = Array.from({ length: LOGIN_MAX_FAILURES_PER_EMAIL / 2 }, freshAddress);
    for (const from of spread)
      for (let i = 0; i < 2; i++)
        expect((await login(user.email, `spread-${i}-pass`, from)).status).toBe(400);
    const owner = await login(user.email, 'password-8', freshAddress());
    expect(owner.status).toBe(429);
    expect(owner.json.message).toMatch(/for this account; retry after \d+ seconds/);
    expect(Number(owner.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('one failure short of the lock, the right password still signs in', async () => {
    const { user } = await account();
    const from = freshAddress();
    for (let i = 1; i < LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP; i++)
      expect((await login(user.email, `wrong-${i}-pass`, from)).status).toBe(400);
    expect((await login(user.email, 'password-8', from)).status).toBe(200);
  });

  it('counts parallel guesses before checking them, so they cannot slip past either lock', async () => {
    const { user } = await account();
    // From ten addresses at once: the account's ceiling, not an address limit, must stop them.
    const spread = await Promise.all(
      Array.from({ length: 10 }, (_, i) => login(user.email, `guess-${i}-pass`, freshAddress())),
    );
    expect(spread.filter((r) => r.status === 400).length).toBe(LOGIN_MAX_FAILURES_PER_EMAIL);
    expect(spread.filter((r) => r.status === 429).length).toBe(10 - LOGIN_MAX_FAILURES_PER_EMAIL);
    // From one address at once: its lock on the account.
    const other = await account();
    const from = freshAddress();
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) => login(other.user.email, `burst-${i}-pass`, from)),
    );
    expect(burst.filter((r) => r.status === 400).length).toBe(LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP);
    expect(burst.filter((r) => r.status === 429).length).toBe(10 - LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP);
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
