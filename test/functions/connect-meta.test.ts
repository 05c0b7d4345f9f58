// Connecting accounts by signing in with Meta, over real HTTP against the fake Graph API's dialogs
// and token endpoints (src/dev/fake-graph/oauth.ts): Facebook Login for Business with its Page
// picker, WhatsApp Embedded Signup, Instagram Login. What this file protects: a sign-in's state
// works once, for the person and organization that started it, before it expires; Meta's refusals
// (a cancelled dialog, a reused code, a code for another redirect_uri) connect nothing and say so;
// the picker connects only what the sign-in granted; the app is subscribed at connect; and no
// token, code or app secret ever appears in an answer or a log line.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshInstagramToken } from '../../src/channels/account-check.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { call, inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const APP = { id: '4242424242', secret: 'meta-app-secret-0123456789' };
const IG_APP = { id: '7373737373', secret: 'instagram-app-secret-987654' };

let fake: FakeGraph;
let svc: TestService;
let owner: Session;
/** Every answer body these tests received, to look for tokens in. */
const answers: string[] = [];

const PERSON = {
  name: 'Dana Owner',
  pages: [
    { id: '101001', name: 'Dana’s Bakery', instagram: { id: '178400001', username: 'danasbakery' } },
    { id: '101002', name: 'Dana’s Café' },
  ],
  wabas: [
    {
      id: '300001',
      phone_numbers: [{ id: '400001', display_phone_number: '+1 555-0100', verified_name: 'Dana’s Bakery' }],
    },
  ],
  instagram: { id: '178499999', username: 'dana.ig' },
};

beforeAll(async () => {
  fake = await startFakeGraph({ apps: { meta: APP, instagram: IG_APP }, persons: [PERSON] });
  svc = await startTestService({
    META_GRAPH_URL: fake.url,
    META_INSTAGRAM_GRAPH_URL: fake.url,
    META_DIALOG_URL: fake.url,
    META_APP_ID: APP.id,
    META_APP_SECRET: APP.secret,
    META_WHATSAPP_CONFIG_ID: '5550001',
    INSTAGRAM_APP_ID: IG_APP.id,
    INSTAGRAM_APP_SECRET: IG_APP.secret,
    INSTAGRAM_AUTHORIZE_URL: fake.url,
    INSTAGRAM_API_URL: fake.url,
  });
  owner = await signUp(svc, 'Meta sign-in A');
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
});

async function fn(token: string, name: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') {
  const r = await call(svc, method, `/functions/v1/${name}`, { token, body });
  answers.push(JSON.stringify(r.json));
  return r;
}

/** What the browser does at the fake dialog: load it, press Continue or Cancel (fields editable, as an attacker could). */
async function atDialog(url: string, decision: 'continue' | 'cancel', edit: Record<string, string> = {}) {
  const page = await fetch(url);
  const html = await page.text();
  expect(page.status, html).toBe(200);
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] as string;
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields.set(
      m[1] as string,
      (m[2] as string).replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))),
    );
  for (const [k, v] of Object.entries(edit)) fields.set(k, v);
  fields.set('decision', decision);
  const res = await fetch(new URL(action, url), {
    method: 'POST',
    body: fields,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    redirect: 'manual',
  });
  const text = await res.text();
  // Facebook Login and Instagram redirect; Embedded Signup first posts its session info to the opener.
  const to =
    res.headers.get('location') ??
    (JSON.parse(/location\.replace\((".*?")\)/.exec(text)?.[1] ?? '""') as string);
  const message = /postMessage\((".*?"), '\*'\)/.exec(text)?.[1];
  return { to: new URL(to), html, sessionInfo: message ? JSON.parse(JSON.parse(message)) : null };
}

async function start(token: string, provider: string) {
  const r = await fn(token, 'connect-start', { provider });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json as { url: string; state: string };
}

/** A Facebook sign-in through the dialog, up to the code the browser brings back. */
async function facebookCode(token: string, edit: Record<string, string> = {}) {
  const { url, state } = await start(token, 'facebook');
  const back = await atDialog(url, 'continue', edit);
  return { state, code: back.to.searchParams.get('code') as string, to: back.to };
}

const accountsOf = async (token: string) =>
  (
    await call(
      svc,
      'GET',
      '/rest/v1/connected_accounts?select=provider,external_id,name,status,verified_by,token_expires_at&disconnected_at=is.null&order=external_id',
      {
        token,
      },
    )
  ).json as { provider: string; external_id: string; verified_by: string; token_expires_at: string | null }[];

describe('Connect with Facebook', () => {
  it('goes through the dialog, lists the Pages without tokens, and connects what the person picks', async () => {
    const options = await fn(owner.access_token, 'connect-options');
    expect(options.json.facebook).toMatchObject({ available: true, message: null });
    const { url, state } = await start(owner.access_token, 'facebook');
    const dialog = new URL(url);
    expect(dialog.origin + dialog.pathname).toBe(`${fake.url}/v26.0/dialog/oauth`);
    expect(dialog.searchParams.get('client_id')).toBe(APP.id);
    expect(dialog.searchParams.get('state')).toBe(state);
    expect(dialog.searchParams.get('redirect_uri')).toBe(`${svc.url}/app/accounts/connect/facebook`);
    expect(dialog.searchParams.get('scope')).toContain('pages_messaging');

    const back = await atDialog(url, 'continue');
    expect(back.html).toContain('Dana Owner');
    expect(`${back.to.origin}${back.to.pathname}`).toBe(`${svc.url}/app/accounts/connect/facebook`);
    expect(back.to.searchParams.get('state')).toBe(state);

    const pages = await fn(owner.access_token, 'connect-facebook', {
      state,
      code: back.to.searchParams.get('code'),
    });
    expect(pages.status, JSON.stringify(pages.json)).toBe(200);
    expect(pages.json.pages).toEqual([
      { id: '101001', name: 'Dana’s Bakery', instagram: { id: '178400001', username: 'danasbakery' } },
      { id: '101002', name: 'Dana’s Café', instagram: null },
    ]);
    expect(JSON.stringify(pages.json)).not.toMatch(/access_token|EAA/);

    const picked = await fn(owner.access_token, 'connect-facebook-select', {
      state: pages.json.state,
      page_ids: ['101001'],
      instagram_ids: ['178400001'],
    });
    expect(picked.status, JSON.stringify(picked.json)).toBe(201);
    expect(
      picked.json.accounts.map(
        (a: { provider: string; external_id: string }) => `${a.provider}:${a.external_id}`,
      ),
    ).toEqual(['facebook:101001', 'instagram:178400001']);
    expect(await accountsOf(owner.access_token)).toMatchObject([
      { provider: 'facebook', external_id: '101001', verified_by: 'oauth', token_expires_at: null },
      { provider: 'instagram', external_id: '178400001', verified_by: 'oauth' },
    ]);
    // The Page (which carries its Instagram account's messages too) was subscribed once.
    expect(fake.oauthSubscriptions('101001')).toBe(1);
    // The picking state is spent: the same pick again connects nothing more.
    const again = await fn(owner.access_token, 'connect-facebook-select', {
      state: pages.json.state,
      page_ids: ['101002'],
    });
    expect(again.json.error).toBe('invalid_state');
  });

  it('refuses a Page or Instagram account the sign-in did not grant, and connects nothing', async () => {
    const org = await signUp(svc, 'Meta picker');
    for (const pick of [{ page_ids: ['101002', '999999'] }, { instagram_ids: ['178499999'] }]) {
      const { state, code } = await facebookCode(org.access_token);
      const pages = await fn(org.access_token, 'connect-facebook', { state, code });
      const r = await fn(org.access_token, 'connect-facebook-select', { state: pages.json.state, ...pick });
      expect(r.status).toBe(403);
      expect(r.json.error).toBe('account_not_verified');
      expect(r.json.message).toMatch(/did not confirm access to (Page 999999|Instagram account 178499999)/);
    }
    expect(await accountsOf(org.access_token)).toEqual([]);
  });

  it('uses a state once: the same redirect posted twice connects nothing the second time', async () => {
    const { state, code } = await facebookCode(owner.access_token);
    expect((await fn(owner.access_token, 'connect-facebook', { state, code })).status).toBe(200);
    const again = await fn(owner.access_token, 'connect-facebook', { state, code });
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({
      error: 'invalid_state',
      message: expect.stringMatching(/start connecting/),
    });
  });

  it('refuses a code Meta already exchanged, with Meta’s reason', async () => {
    const used = await facebookCode(owner.access_token);
    expect(
      (await fn(owner.access_token, 'connect-facebook', { state: used.state, code: used.code })).status,
    ).toBe(200);
    const { state } = await start(owner.access_token, 'facebook');
    const r = await fn(owner.access_token, 'connect-facebook', { state, code: used.code });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({
      error: 'account_not_verified',
      details: { provider: 'facebook', provider_error: { code: 100, subcode: 36009 } },
    });
    expect(r.json.message).toMatch(/This authorization code has been used/);
  });

  it('refuses a code issued for another redirect_uri (a tampered dialog link)', async () => {
    const { state, code, to } = await facebookCode(owner.access_token, {
      redirect_uri: 'https://evil.example/steal',
    });
    expect(to.origin).toBe('https://evil.example');
    const r = await fn(owner.access_token, 'connect-facebook', { state, code });
    expect(r.status).toBe(403);
    expect(r.json.message).toMatch(/redirect_uri is identical/);
  });

  it('says the sign-in was cancelled when the person pressed Cancel at Meta, and spends the state', async () => {
    const { url, state } = await start(owner.access_token, 'facebook');
    const back = await atDialog(url, 'cancel');
    expect(back.to.searchParams.get('error')).toBe('access_denied');
    expect(back.to.searchParams.get('state')).toBe(state);
    const r = await fn(owner.access_token, 'connect-facebook', { state, error: 'access_denied' });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      error: 'sign_in_cancelled',
      message: expect.stringMatching(/cancelled.*nothing was connected/),
    });
    expect(
      (await fn(owner.access_token, 'connect-facebook', { state, error: 'access_denied' })).json.error,
    ).toBe('invalid_state');
  });

  it('refuses another person’s state, and that state no longer works for its owner either', async () => {
    const stranger = await signUp(svc, 'Meta stranger');
    const { state, code } = await facebookCode(owner.access_token);
    const r = await fn(stranger.access_token, 'connect-facebook', { state, code });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('invalid_state');
    expect((await fn(owner.access_token, 'connect-facebook', { state, code })).json.error).toBe(
      'invalid_state',
    );
  });

  it('refuses the state in another organization of the same person', async () => {
    const person = await signUp(svc, 'Meta org one');
    const { state, code } = await facebookCode(person.access_token);
    const created = await call(svc, 'POST', '/functions/v1/organization-create', {
      token: person.access_token,
      body: { name: 'Meta org two' },
    });
    const switched = await call(svc, 'POST', '/functions/v1/organization-switch', {
      token: person.access_token,
      body: { organization_id: created.json.organization.id },
    });
    expect(switched.status, JSON.stringify(switched.json)).toBe(200);
    expect(orgOf(switched.json)).not.toBe(orgOf(person));
    const r = await fn(switched.json.access_token, 'connect-facebook', { state, code });
    expect(r.json.error).toBe('invalid_state');
  });

  it('refuses an expired state', async () => {
    const { state, code } = await facebookCode(owner.access_token);
    await svc.services.db.query(
      `update app.connect_states set expires_at = now() - interval '1 second' where used_at is null`,
    );
    const r = await fn(owner.access_token, 'connect-facebook', { state, code });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('invalid_state');
  });

  it('lets only owners and admins start, and refuses malformed bodies', async () => {
    const member = await inviteAndAccept(svc, owner, await signUp(svc), 'member');
    const r = await fn(member, 'connect-start', { provider: 'facebook' });
    expect(r.status).toBe(403);
    expect((await fn(owner.access_token, 'connect-start', { provider: 'shopify' })).status).toBe(400);
    const both = await fn(owner.access_token, 'connect-facebook', {
      state: 'x',
      code: 'y',
      error: 'access_denied',
    });
    expect(both.json.error).toBe('validation_error');
    expect((await fn(owner.access_token, 'connect-facebook', { code: 'y' })).json.error).toBe(
      'validation_error',
    );
    expect((await fn(owner.access_token, 'connect-facebook-select', { state: 'x' })).json.error).toBe(
      'validation_error',
    );
  });
});

describe('Connect WhatsApp (Embedded Signup)', () => {
  it('exchanges the code, checks the number is the business account’s, subscribes the app and connects it', async () => {
    const org = await signUp(svc, 'Meta WhatsApp');
    const { url, state } = await start(org.access_token, 'whatsapp');
    const dialog = new URL(url).searchParams;
    expect(dialog.get('config_id')).toBe('5550001');
    expect(dialog.get('response_type')).toBe('code');
    expect(dialog.get('override_default_response_type')).toBe('true');
    expect(JSON.parse(dialog.get('extras') as string)).toMatchObject({ setup: {}, sessionInfoVersion: '3' });
    const back = await atDialog(url, 'continue');
    expect(back.sessionInfo).toMatchObject({
      type: 'WA_EMBEDDED_SIGNUP',
      event: 'FINISH',
      data: { waba_id: '300001', phone_number_id: '400001' },
    });
    const r = await fn(org.access_token, 'connect-whatsapp', {
      state,
      code: back.to.searchParams.get('code'),
      ...back.sessionInfo.data,
      business_id: undefined,
    });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(r.json.accounts).toMatchObject([
      { provider: 'whatsapp', external_id: '400001', name: 'Dana’s Bakery' },
    ]);
    expect(fake.oauthSubscriptions('300001')).toBe(1);
    expect(await accountsOf(org.access_token)).toMatchObject([
      { provider: 'whatsapp', verified_by: 'oauth' },
    ]);
  });

  it('refuses a phone number that is not the business account’s, and connects nothing', async () => {
    const org = await signUp(svc, 'Meta WhatsApp wrong number');
    const { url, state } = await start(org.access_token, 'whatsapp');
    const back = await atDialog(url, 'continue');
    const r = await fn(org.access_token, 'connect-whatsapp', {
      state,
      code: back.to.searchParams.get('code'),
      waba_id: '300001',
      phone_number_id: '400999',
    });
    expect(r.status).toBe(403);
    expect(r.json.error).toBe('account_not_verified');
    expect(await accountsOf(org.access_token)).toEqual([]);
  });
});

describe('Connect Instagram (Instagram Login)', () => {
  it('turns the code into a 60-day token, connects the account with its expiry, and the token refreshes', async () => {
    const org = await signUp(svc, 'Meta Instagram');
    const { url, state } = await start(org.access_token, 'instagram');
    const dialog = new URL(url);
    expect(dialog.origin + dialog.pathname).toBe(`${fake.url}/oauth/authorize`);
    expect(dialog.searchParams.get('client_id')).toBe(IG_APP.id);
    expect(dialog.searchParams.get('scope')).toBe(
      'instagram_business_basic,instagram_business_manage_messages,instagram_business_content_publish',
    );
    const back = await atDialog(url, 'continue');
    const r = await fn(org.access_token, 'connect-instagram', {
      state,
      code: back.to.searchParams.get('code'),
    });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(r.json.accounts).toMatchObject([
      { provider: 'instagram', external_id: '178499999', name: 'dana.ig' },
    ]);
    const days = (Date.parse(r.json.accounts[0].token_expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(59);
    expect(days).toBeLessThan(61);
    expect(fake.oauthSubscriptions('178499999')).toBe(1);

    // The daily connection check's refresh, with the token the exchange issued.
    const issued = fake.requests.find((q) => q.path === '/access_token' && q.response?.status === 200);
    const token = (issued?.response?.body as { access_token: string } | undefined)?.access_token ?? '';
    const config = { url: fake.url, instagramUrl: fake.url, version: 'v26.0', timeoutMs: 5000 };
    const refreshed = await refreshInstagramToken(config, token, new Date());
    expect(refreshed).toMatchObject({ state: 'ok' });
    if (refreshed.state !== 'ok') return;
    expect(refreshed.token).not.toBe(token);
    expect(refreshed.expiresAt?.getTime()).toBeGreaterThan(Date.now() + 59 * 86_400_000);
    expect(await refreshInstagramToken(config, 'not-a-token', new Date())).toMatchObject({
      state: 'refused',
    });
  });

  it('says the sign-in was cancelled when the person declined at Instagram', async () => {
    const { url, state } = await start(owner.access_token, 'instagram');
    const back = await atDialog(url, 'cancel');
    expect(back.to.searchParams.get('error_reason')).toBe('user_denied');
    const r = await fn(owner.access_token, 'connect-instagram', { state, error: 'access_denied' });
    expect(r.json.error).toBe('sign_in_cancelled');
  });
});

describe('secrets', () => {
  it('never puts a token, a code or the app secrets in an answer or a log line', () => {
    const issued = fake.requests.flatMap((q) => {
      const body = q.response?.body as
        | { access_token?: string; data?: { access_token?: string }[] }
        | undefined;
      return [body?.access_token, ...(Array.isArray(body?.data) ? body.data.map((d) => d.access_token) : [])];
    });
    const secrets = [...issued.filter((t): t is string => typeof t === 'string'), APP.secret, IG_APP.secret];
    expect(secrets.length).toBeGreaterThan(10);
    const logs = svc.logs();
    for (const s of secrets) {
      for (const a of answers) expect(a).not.toContain(s);
      expect(logs).not.toContain(s);
    }
  });
});
