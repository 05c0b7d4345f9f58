// Connected accounts over real HTTP (functions/v1/connected-accounts, /rest/v1) and through the
// domain functions the sender and the webhook receiver call. What this file protects: who may
// list, connect and disconnect; one live (provider, external_id) per organization; another
// tenant's id looks missing; and no secret ever leaves: not in an answer, not in a log line, not
// through /rest/v1, not even as plaintext in the database.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proveAccount } from '../../src/channels/account-proof.ts';
import {
  accountByExternalId,
  accountForSending,
  type ConnectedAccount,
  connectAccount,
} from '../../src/domain/connected-accounts.ts';
import { call, inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { humanPrincipal } from '../rls/fixtures.ts';

let svc: TestService;
let owner: Session;
let memberToken: string;
let adminToken: string;
let other: Session;
let readAgent: string;
let adminAgent: string;
/** Every answer body these tests received, to look for secrets in. */
const answers: string[] = [];
let seq = 0;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Accounts A');
  other = await signUp(svc, 'Accounts B');
  memberToken = await inviteAndAccept(svc, owner, await signUp(svc), 'member');
  adminToken = await inviteAndAccept(svc, owner, await signUp(svc), 'admin');
  // Growth gives agents every scope: an admin-scoped agent is still not an owner or admin.
  await setPlan(svc, owner, 'growth');
  readAgent = (await agentToken(svc, owner, ['read'])).token;
  adminAgent = (await agentToken(svc, owner, ['admin'])).token;
});
afterAll(() => svc?.stop());

const URL_ = '/functions/v1/connected-accounts';
async function fn(method: string, token: string, body?: unknown, path = URL_) {
  const r = await call(svc, method, path, { token, body });
  answers.push(JSON.stringify(r.json));
  return r;
}
/** Secrets unlike anything else in a body or a log, so a leak cannot hide. */
const secret = (tag: string) => `SECRET-${tag}-${process.pid}-${++seq}-EAAGzzz`;
const phoneId = () => `1${process.pid}${Date.now() % 1e6}${++seq}`;
const ownerOf = (s: Session) => humanPrincipal(s.user.id, orgOf(s), 'owner');

const connect = (token: string, body: Record<string, unknown>) =>
  fn('POST', token, { provider: 'whatsapp', external_id: phoneId(), access_token: secret('t'), ...body });

describe('connecting', () => {
  it('answers 201 with the account and no secret, and lists it for members and read agents', async () => {
    const token = secret('token');
    const hook = secret('hook');
    const externalId = phoneId();
    const r = await fn('POST', owner.access_token, {
      provider: 'whatsapp',
      external_id: externalId,
      name: 'Support line',
      access_token: token,
      webhook_secret: hook,
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.json).sort()).toEqual(
      [
        'created_at',
        'created_by',
        'disconnected_at',
        'external_id',
        'has_webhook_secret',
        'id',
        'name',
        'organization_id',
        'provider',
        'status',
        'updated_at',
        'verified_at',
        'verified_by',
        'token_expires_at',
        'checked_at',
        'needs_reconnect_reason',
      ].sort(),
    );
    expect(r.json).toMatchObject({
      provider: 'whatsapp',
      external_id: externalId,
      name: 'Support line',
      status: 'connected',
      has_webhook_secret: true,
      created_by: owner.user.id,
      organization_id: orgOf(owner),
      disconnected_at: null,
      verified_by: 'token',
      needs_reconnect_reason: null,
    });
    expect(Date.parse(r.json.verified_at)).toBeGreaterThan(Date.now() - 60_000);

    for (const t of [owner.access_token, memberToken, readAgent]) {
      const list = await fn('GET', t);
      expect(list.status).toBe(200);
      expect(list.json.pagination).toMatchObject({ page: 1, per_page: 25 });
      expect(list.json.data.map((a: ConnectedAccount) => a.id)).toContain(r.json.id);
    }
    const paged = await fn('GET', owner.access_token, undefined, `${URL_}?per_page=1&page=1`);
    expect(paged.json.data).toHaveLength(1);
    expect(paged.json.pagination.total).toBeGreaterThanOrEqual(1);
  });

  it('lets admins connect, and refuses members and agents (403) before anything is written', async () => {
    expect((await connect(adminToken, {})).status).toBe(201);
    const externalId = phoneId();
    const byMember = await connect(memberToken, { external_id: externalId });
    expect(byMember.status).toBe(403);
    expect(byMember.json).toMatchObject({ error: 'forbidden' });
    for (const agent of [readAgent, adminAgent]) {
      expect((await connect(agent, { external_id: externalId })).status).toBe(403);
    }
    const list = await fn('GET', owner.access_token, undefined, `${URL_}?per_page=100`);
    expect(list.json.data.map((a: ConnectedAccount) => a.external_id)).not.toContain(externalId);
  });

  it('validates the body: provider, ids, and a Shopify account needs its webhook secret', async () => {
    const noSecret = await fn('POST', owner.access_token, {
      provider: 'shopify',
      external_id: 'shop-a.myshopify.com',
      access_token: secret('t'),
    });
    expect(noSecret.status).toBe(400);
    expect(noSecret.json.error).toBe('validation_error');
    expect(noSecret.json.details.issues).toEqual([{ path: 'webhook_secret', message: expect.any(String) }]);
    const badProvider = await connect(owner.access_token, { provider: 'telegram' });
    expect(badProvider.status).toBe(400);
    expect(badProvider.json.details.issues[0].path).toBe('provider');
    const blank = await connect(owner.access_token, { external_id: '  ' });
    expect(blank.status).toBe(400);
    const shop = await fn('POST', owner.access_token, {
      provider: 'shopify',
      external_id: `shop-${phoneId()}.myshopify.com`,
      access_token: secret('t'),
      webhook_secret: secret('h'),
    });
    expect(shop.status).toBe(201);
    expect(shop.json.has_webhook_secret).toBe(true);
  });
});

describe('one live (provider, external_id) per organization', () => {
  it('another organization connects the same account as if no one had it; connecting again here is a reconnect', async () => {
    const externalId = phoneId();
    const first = await connect(owner.access_token, { external_id: externalId });
    expect(first.status).toBe(201);
    const elsewhere = await connect(other.access_token, { external_id: externalId });
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.json.id).not.toBe(first.json.id);
    expect(JSON.stringify(elsewhere.json)).not.toContain(first.json.id);
    expect(JSON.stringify(elsewhere.json)).not.toContain(orgOf(owner));
    const token = secret('fresh');
    const again = await connect(owner.access_token, { external_id: externalId, access_token: token });
    expect(again.status).toBe(201);
    expect(again.json).toMatchObject({ id: first.json.id, status: 'connected', verified_by: 'token' });
    expect(Date.parse(again.json.verified_at)).toBeGreaterThanOrEqual(Date.parse(first.json.verified_at));
    expect((await accountForSending(svc.services, ownerOf(owner), first.json.id))?.access_token).toBe(token);
    // The same id on another provider is another account.
    expect(
      (await connect(other.access_token, { external_id: externalId, provider: 'instagram' })).status,
    ).toBe(201);
  });

  it('two organizations connecting one account at once each end with exactly one live claim', async () => {
    const externalId = phoneId();
    const results = await Promise.all(
      [owner, other, owner, other].map((s) => connect(s.access_token, { external_id: externalId })),
    );
    // A connect of the same organization in flight may answer 409 (try again); never one of another.
    for (const r of results) expect([201, 409]).toContain(r.status);
    const live = await svc.services.db.query<{ organization_id: string }>(
      `select organization_id from app.connected_accounts
        where provider = 'whatsapp' and external_id = $1 and disconnected_at is null`,
      [externalId],
    );
    expect(live.map((r) => r.organization_id).sort()).toEqual([orgOf(owner), orgOf(other)].sort());
  });
});

describe('disconnecting', () => {
  it('keeps the row as disconnected, frees the account for others, and is idempotent', async () => {
    const externalId = phoneId();
    const a = await connect(owner.access_token, { external_id: externalId });
    const r = await fn('DELETE', owner.access_token, { id: a.json.id });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: a.json.id, status: 'disconnected' });
    expect(r.json.disconnected_at).toEqual(expect.any(String));
    expect((await fn('DELETE', owner.access_token, { id: a.json.id })).json.disconnected_at).toBe(
      r.json.disconnected_at,
    );
    const list = await fn('GET', owner.access_token, undefined, `${URL_}?per_page=100`);
    expect(list.json.data.map((x: ConnectedAccount) => x.id)).not.toContain(a.json.id);
    // The view keeps it, with its status.
    const rest = await call(svc, 'GET', `/rest/v1/connected_accounts?id=eq.${a.json.id}`, {
      token: owner.access_token,
    });
    expect(rest.json).toEqual([expect.objectContaining({ id: a.json.id, status: 'disconnected' })]);
    expect((await connect(other.access_token, { external_id: externalId })).status).toBe(201);
  });

  it('reconnecting in the same organization revives the same row (its history stays attached)', async () => {
    const externalId = phoneId();
    const a = await connect(owner.access_token, { external_id: externalId, name: 'Line 1' });
    await fn('DELETE', owner.access_token, { id: a.json.id });
    const back = await connect(owner.access_token, { external_id: externalId });
    expect(back.status).toBe(201);
    expect(back.json).toMatchObject({
      id: a.json.id,
      status: 'connected',
      name: 'Line 1',
      disconnected_at: null,
    });
  });

  it('answers 404 for another tenant’s id exactly as for an unknown one, and leaves it connected', async () => {
    const theirs = await connect(other.access_token, {});
    const cross = await fn('DELETE', owner.access_token, { id: theirs.json.id });
    const unknown = await fn('DELETE', owner.access_token, { id: '00000000-0000-4000-8000-000000000000' });
    expect(cross.status).toBe(404);
    expect(cross.json).toEqual(unknown.json);
    const still = await fn('GET', other.access_token, undefined, `${URL_}?per_page=100`);
    expect(still.json.data.find((x: ConnectedAccount) => x.id === theirs.json.id)?.status).toBe('connected');
  });

  it('refuses members (403) and a body without an id (400)', async () => {
    const a = await connect(owner.access_token, {});
    expect((await fn('DELETE', memberToken, { id: a.json.id })).status).toBe(403);
    expect((await fn('DELETE', readAgent, { id: a.json.id })).status).toBe(403);
    expect((await fn('DELETE', owner.access_token, {})).status).toBe(400);
    expect((await fn('DELETE', owner.access_token, { id: 'nope' })).status).toBe(400);
  });
});

describe('secrets stay secret', () => {
  it('/rest/v1 serves the view without secret columns; the table and its secret columns are out of reach', async () => {
    const a = await connect(owner.access_token, { webhook_secret: secret('h') });
    const rows = await call(svc, 'GET', `/rest/v1/connected_accounts?id=eq.${a.json.id}`, {
      token: owner.access_token,
    });
    expect(rows.status).toBe(200);
    expect(Object.keys(rows.json[0]).some((k) => /access_token|secret_enc|encrypted/.test(k))).toBe(false);
    expect(rows.json[0]).toMatchObject({ id: a.json.id, has_webhook_secret: true, status: 'connected' });
    for (const column of ['access_token_encrypted', 'access_token', 'webhook_secret_encrypted']) {
      const asked = await call(svc, 'GET', `/rest/v1/connected_accounts?select=${column}`, {
        token: owner.access_token,
      });
      expect(asked.status).toBe(400);
    }
    // Another tenant's view is empty; nobody writes through it.
    const theirs = await call(svc, 'GET', `/rest/v1/connected_accounts?id=eq.${a.json.id}`, {
      token: other.access_token,
    });
    expect(theirs.json).toEqual([]);
    const write = await call(svc, 'POST', '/rest/v1/connected_accounts', {
      token: owner.access_token,
      body: { provider: 'whatsapp', external_id: phoneId() },
    });
    expect([401, 403, 405]).toContain(write.status);
    // As SQL, `authenticated` may not select the secret columns of the table itself.
    await expect(
      svc.services.db.asPrincipal(ownerOf(owner), (tx) =>
        tx.query('select access_token_encrypted from app.connected_accounts'),
      ),
    ).rejects.toMatchObject({ code: '42501' });
  });

  it('stores only ciphertext bound to its row: a copy in another row does not open', async () => {
    const token = secret('stored');
    const a = await connect(owner.access_token, { access_token: token });
    const b = await connect(owner.access_token, {});
    const [row] = await svc.services.db.query<{ t: string }>(
      'select access_token_encrypted as t from app.connected_accounts where id = $1',
      [a.json.id],
    );
    expect(row?.t).toMatch(/^v1:[0-9a-f]{8}:/);
    expect(row?.t).not.toContain(token);
    await svc.services.db.query(
      'update app.connected_accounts set access_token_encrypted = $1 where id = $2',
      [row?.t, b.json.id],
    );
    await expect(accountForSending(svc.services, ownerOf(owner), b.json.id)).rejects.toThrow(/does not open/);
  });
});

describe('for the sending and receiving code', () => {
  it('accountForSending opens the caller’s own account only; accountByExternalId finds live accounts only', async () => {
    const token = secret('send');
    const hook = secret('hook');
    const externalId = phoneId();
    const account = await connectAccount(
      svc.services,
      ownerOf(owner),
      { provider: 'whatsapp', external_id: externalId, access_token: token, webhook_secret: hook },
      proveAccount.bind(null, svc.services.config.graph),
    );
    const opened = await accountForSending(svc.services, ownerOf(owner), account.id);
    expect(opened?.access_token).toBe(token);
    expect(opened?.webhook_secret).toBe(hook);
    // Secrets are not enumerable: serializing or logging the account leaves them out.
    expect(JSON.stringify(opened)).not.toContain(token);
    expect(JSON.stringify(opened)).not.toContain(hook);
    expect(await accountForSending(svc.services, ownerOf(other), account.id)).toBeNull();

    const routed = await accountByExternalId(svc.services, 'whatsapp', externalId);
    expect(routed?.organization_id).toBe(orgOf(owner));
    expect(routed?.access_token).toBe(token);
    expect(await accountByExternalId(svc.services, 'instagram', externalId)).toBeNull();
    await fn('DELETE', owner.access_token, { id: account.id });
    expect(await accountByExternalId(svc.services, 'whatsapp', externalId)).toBeNull();
    expect(await accountForSending(svc.services, ownerOf(owner), account.id)).toBeNull();
  });
});

describe('in the end', () => {
  it('no secret appears in any answer or log line of this file', async () => {
    // Runs last in the file: everything above has answered and logged by now.
    const bodies = answers.join('\n');
    const logs = svc.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const text of [bodies, logs]) {
      expect(text).not.toMatch(/SECRET-[a-z]+-\d+-\d+-EAAGzzz/);
      expect(text).not.toMatch(/v1:[0-9a-f]{8}:[A-Za-z0-9_-]{20,}/);
    }
  });
});
