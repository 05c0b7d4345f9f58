import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signUp } from '../helpers/http.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    LOGIN_MAX_FAILURES_PER_EMAIL: '3',
    LOGIN_MAX_PER_IP: '30',
    SIGNUP_MAX_PER_IP: '6',
  });
});
afterAll(() => svc?.stop());

const login = (email: string, password: string) =>
  call(svc, 'POST', '/auth/v1/token?grant_type=password', { body: { email, password } });

describe('brute-force guards on sign-in', () => {
  it('locks an account after repeated failures, even against the right password, with Retry-After', async () => {
    const { user } = await signUp(svc);
    for (let i = 0; i < 3; i++) expect((await login(user.email, `wrong-${i}-pass`)).status).toBe(400);
    const locked = await login(user.email, 'password-8');
    expect(locked.status).toBe(429);
    expect(locked.json.error).toBe('rate_limit_exceeded');
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(locked.json.message).toContain(`${retryAfter} seconds`);
  });

  it('counts parallel guesses before checking them, so they cannot slip past the lock', async () => {
    const { user } = await signUp(svc);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => login(user.email, `guess-${i}-pass`)),
    );
    const checked = results.filter((r) => r.status === 400).length;
    expect(checked).toBeLessThanOrEqual(3);
    expect(results.filter((r) => r.status === 429).length).toBe(10 - checked);
  });

  it('a success clears the failure count', async () => {
    const { user } = await signUp(svc);
    await login(user.email, 'wrong-1-pass');
    await login(user.email, 'wrong-2-pass');
    expect((await login(user.email, 'password-8')).status).toBe(200);
    await login(user.email, 'wrong-3-pass');
    expect((await login(user.email, 'password-8')).status).toBe(200);
  });

  it('limits attempts per address across many emails', async () => {
    let status = 0;
    for (let i = 0; i < 40 && status !== 429; i++)
      status = (await login(uniqueEmail('spray'), 'whatever-pass')).status;
    expect(status).toBe(429);
  });

  it('limits sign-ups per address', async () => {
    let status = 0;
    for (let i = 0; i < 8 && status !== 429; i++) {
      status = (
        await call(svc, 'POST', '/auth/v1/signup', { body: { email: uniqueEmail(), password: 'password-8' } })
      ).status;
    }
    expect(status).toBe(429);
  });
});
