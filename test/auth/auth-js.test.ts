import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authClient } from '../helpers/http.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ REFRESH_TOKEN_REUSE_INTERVAL_SECONDS: '1' });
});
afterAll(() => svc?.stop());

const client = () => authClient(svc);

describe('sign-up and sign-in with @supabase/auth-js', () => {
  it('signs up with an organization and gets a session whose claims name it with the owner role', async () => {
    const email = uniqueEmail();
    const { data, error } = await client().signUp({
      email,
      password: 'correct horse',
      options: { data: { organization_name: 'Acme Ltd', full_name: 'Ada' } },
    });
    expect(error).toBeNull();
    expect(data.session?.expires_in).toBe(3600);
    expect(data.user?.email).toBe(email);
    expect(data.user?.user_metadata).toEqual({ full_name: 'Ada' });
    const claims = decodeJwt(data.session?.access_token as string);
    expect(claims).toMatchObject({
      sub: data.user?.id,
      email,
      role: 'authenticated',
      aud: 'authenticated',
      aal: 'aal1',
      iss: `${svc.url}/auth/v1`,
    });
    const app = claims.app_metadata as Record<string, string>;
    expect(app.org_role).toBe('owner');
    expect(app.organization_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(app.org_id).toBe(app.organization_id);
    expect(typeof claims.session_id).toBe('string');
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
  });

  it('signs up without an organization: no organization claims', async () => {
    const { data, error } = await client().signUp({ email: uniqueEmail(), password: 'password-8' });
    expect(error).toBeNull();
    const app = decodeJwt(data.session?.access_token as string).app_metadata as Record<string, unknown>;
    expect(app.organization_id).toBeUndefined();
    expect(app.provider).toBe('email');
  });

  it('refuses a second account with the same email, in any letter case', async () => {
    const email = uniqueEmail();
    await client().signUp({ email, password: 'password-8' });
    const { error } = await client().signUp({ email: email.toUpperCase(), password: 'password-9' });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('user_already_exists');
  });

  it('refuses a short password with weak_password and creates nothing', async () => {
    const email = uniqueEmail();
    const { error } = await client().signUp({ email, password: 'short' });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('weak_password');
    const login = await client().signInWithPassword({ email, password: 'short' });
    expect(login.error?.code).toBe('invalid_credentials');
  });

  it('signs in with the password; a wrong password and an unknown email get the same answer', async () => {
    const email = uniqueEmail();
    await client().signUp({ email, password: 'right password' });
    const ok = await client().signInWithPassword({ email, password: 'right password' });
    expect(ok.error).toBeNull();
    expect(ok.data.session?.refresh_token).toBeTruthy();
    expect(ok.data.user?.email).toBe(email);

    const wrong = await client().signInWithPassword({ email, password: 'wrong password' });
    const unknown = await client().signInWithPassword({ email: uniqueEmail(), password: 'wrong password' });
    for (const r of [wrong, unknown]) {
      expect(r.error?.status).toBe(400);
      expect(r.error?.code).toBe('invalid_credentials');
      expect(r.error?.message).toBe('Invalid login credentials');
    }
  });

  it('getUser returns the user for a live session and fails after logout', async () => {
    const c = client();
    const email = uniqueEmail();
    const { data } = await c.signUp({ email, password: 'password-8' });
    const token = data.session?.access_token as string;
    const got = await c.getUser(token);
    expect(got.data.user?.email).toBe(email);
    expect(got.data.user?.identities).toEqual([]);

    const out = await c.admin.signOut(token, 'local');
    expect(out.error).toBeNull();
    const after = await c.getUser(token);
    expect(after.data.user).toBeNull();
    expect(after.error).not.toBeNull();
    // On the wire, GoTrue's answer: the token's session is gone.
    const raw = await fetch(`${svc.url}/auth/v1/user`, {
      headers: { apikey: svc.anonKey, authorization: `Bearer ${token}` },
    });
    expect(raw.status).toBe(403);
    expect(((await raw.json()) as { code: string }).code).toBe('session_not_found');
  });
});

describe('refresh tokens', () => {
  async function session() {
    const { data } = await client().signUp({ email: uniqueEmail(), password: 'password-8' });
    return data.session as NonNullable<typeof data.session>;
  }
  const refresh = (token: string) => client().refreshSession({ refresh_token: token });

  it('rotates on every use: each refresh gives a new refresh token and a working access token', async () => {
    const s = await session();
    const r1 = await refresh(s.refresh_token);
    expect(r1.error).toBeNull();
    expect(r1.data.session?.refresh_token).not.toBe(s.refresh_token);
    const r2 = await refresh(r1.data.session?.refresh_token as string);
    expect(r2.error).toBeNull();
    const me = await client().getUser(r2.data.session?.access_token);
    expect(me.data.user?.id).toBe(s.user.id);
  });

  it('gives a client that lost the answer the next token: its old token stands for the active one', async () => {
    const s = await session();
    const r1 = await refresh(s.refresh_token);
    const lost = r1.data.session?.refresh_token as string;
    // The answer never arrived; later (past the reuse interval) the client retries the old token.
    await new Promise((r) => setTimeout(r, 1500));
    const retry = await refresh(s.refresh_token);
    expect(retry.error).toBeNull();
    expect(retry.data.session?.refresh_token).not.toBe(lost);
    // The session goes on with the new token.
    expect((await refresh(retry.data.session?.refresh_token as string)).error).toBeNull();
  });

  it('tolerates reuse of an older token within the reuse interval (two tabs refreshing at once)', async () => {
    const s = await session();
    const r1 = await refresh(s.refresh_token);
    await refresh(r1.data.session?.refresh_token as string);
    const replay = await refresh(s.refresh_token);
    expect(replay.error).toBeNull();
    expect(replay.data.session?.user.id).toBe(s.user.id);
  });

  it('two refreshes of one token at once (two tabs waking up) both get a working session of the same family', async () => {
    const s = await session();
    // On PostgreSQL the two requests overlap and take turns on the session's row lock; the second
    // finds the token revoked a moment ago (within the reuse interval). PGlite runs them one after
    // the other, and the second is the client that lost the answer. Either way both tabs stay in.
    const [a, b] = await Promise.all([refresh(s.refresh_token), refresh(s.refresh_token)]);
    expect(a.error).toBeNull();
    expect(b.error).toBeNull();
    const tabs = [a.data.session, b.data.session].map((x) => x as NonNullable<typeof x>);
    expect(new Set([s.refresh_token, ...tabs.map((t) => t.refresh_token)]).size).toBe(3);
    for (const tab of tabs) {
      expect(decodeJwt(tab.access_token).session_id).toBe(decodeJwt(s.access_token).session_id);
      expect((await client().getUser(tab.access_token)).data.user?.id).toBe(s.user.id);
    }
    // Each tab goes on refreshing with what it got, and the session is still alive afterwards.
    let latest = '';
    for (const tab of tabs) {
      const next = await refresh(tab.refresh_token);
      expect(next.error).toBeNull();
      latest = next.data.session?.access_token as string;
    }
    expect((await client().getUser(latest)).data.user?.id).toBe(s.user.id);
  });

  it('treats reuse of an older token as theft: the whole family is revoked', async () => {
    const s = await session();
    const r1 = await refresh(s.refresh_token);
    const r2 = await refresh(r1.data.session?.refresh_token as string);
    const current = r2.data.session?.refresh_token as string;
    await new Promise((r) => setTimeout(r, 1500));
    const replay = await refresh(s.refresh_token);
    expect(replay.error?.status).toBe(400);
    expect(replay.error?.code).toBe('refresh_token_already_used');
    // Every token of the family is dead now, including the legitimate one.
    const afterwards = await refresh(current);
    expect(afterwards.error?.status).toBe(400);
    expect(afterwards.data.session).toBeNull();
    const me = await client().getUser(r2.data.session?.access_token);
    expect(me.data.user).toBeNull();
  });

  it('rejects an unknown refresh token', async () => {
    const r = await refresh('not-a-real-token');
    expect(r.error?.status).toBe(400);
    expect(r.error?.code).toBe('refresh_token_not_found');
  });
});

describe('updateUser', () => {
  it('changes the password and ends every other session, keeping this one', async () => {
    const email = uniqueEmail();
    const here = client();
    await here.signUp({ email, password: 'password-8' });
    const elsewhere = (await client().signInWithPassword({ email, password: 'password-8' })).data.session;
    const { data: current } = await here.signInWithPassword({ email, password: 'password-8' });
    await here.setSession({
      access_token: current.session?.access_token as string,
      refresh_token: current.session?.refresh_token as string,
    });

    const changed = await here.updateUser({ password: 'new-password-9', data: { nickname: 'ada' } });
    expect(changed.error).toBeNull();
    expect(changed.data.user?.user_metadata).toMatchObject({ nickname: 'ada' });

    expect(
      (await client().refreshSession({ refresh_token: elsewhere?.refresh_token as string })).error?.status,
    ).toBe(400);
    expect((await client().getUser(current.session?.access_token)).data.user?.email).toBe(email);
    expect((await client().signInWithPassword({ email, password: 'password-8' })).error?.code).toBe(
      'invalid_credentials',
    );
    expect((await client().signInWithPassword({ email, password: 'new-password-9' })).error).toBeNull();
  });

  it('refuses a short new password and oversized metadata', async () => {
    const here = client();
    const { data } = await here.signUp({ email: uniqueEmail(), password: 'password-8' });
    await here.setSession({
      access_token: data.session?.access_token as string,
      refresh_token: data.session?.refresh_token as string,
    });
    expect((await here.updateUser({ password: 'short' })).error?.code).toBe('weak_password');
    const big = await here.updateUser({ data: { blob: 'x'.repeat(5000) } });
    expect(big.error?.status).toBe(400);
  });
});

describe('logout scopes', () => {
  it('local ends this session, others ends the rest, global ends all', async () => {
    const email = uniqueEmail();
    await client().signUp({ email, password: 'password-8' });
    const login = async () => {
      const { data } = await client().signInWithPassword({ email, password: 'password-8' });
      if (!data.session) throw new Error('sign-in failed');
      return data.session;
    };
    const [a, b, c] = [await login(), await login(), await login()];
    const alive = async (t: string) => (await client().getUser(t)).data.user !== null;

    expect((await client().admin.signOut(a.access_token, 'others')).error).toBeNull();
    expect([await alive(a.access_token), await alive(b.access_token), await alive(c.access_token)]).toEqual([
      true,
      false,
      false,
    ]);
    expect((await refresh(b.refresh_token)).error?.code).toBe('refresh_token_not_found');

    const d = await login();
    expect((await client().admin.signOut(d.access_token, 'global')).error).toBeNull();
    expect([await alive(a.access_token), await alive(d.access_token)]).toEqual([false, false]);
  });
  const refresh = (token: string) => client().refreshSession({ refresh_token: token });
});

describe('JWKS', () => {
  it('verifies access tokens, anon and service-role keys with the published ES256 key', async () => {
    const res = await fetch(`${svc.url}/auth/v1/.well-known/jwks.json`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=600');
    const jwks = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d');

    const { data } = await client().signUp({ email: uniqueEmail(), password: 'password-8' });
    const remote = createRemoteJWKSet(new URL(`${svc.url}/auth/v1/.well-known/jwks.json`));
    const verified = await jwtVerify(data.session?.access_token as string, remote, { algorithms: ['ES256'] });
    expect(verified.protectedHeader.kid).toBe(jwks.keys[0]?.kid);
    const local = createLocalJWKSet(jwks as never);
    expect((await jwtVerify(svc.anonKey, local)).payload.role).toBe('anon');
    expect((await jwtVerify(svc.serviceRoleKey, local)).payload.role).toBe('service_role');
  });

  it('auth-js getClaims verifies the token against the JWKS', async () => {
    const c = client();
    const { data } = await c.signUp({ email: uniqueEmail(), password: 'password-8' });
    const claims = await c.getClaims(data.session?.access_token);
    expect(claims.error).toBeNull();
    expect(claims.data?.claims.sub).toBe(data.user?.id);
  });
});
