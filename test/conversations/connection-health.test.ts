// Connection health (docs/conversations.md "Connection health"): the daily check asks Meta about
// every connected account's token and marks the ones that stopped working; sends and posts on
// them fail at once, people and agents see why, a reconnect clears it; an outage changes nothing;
// Instagram tokens are refreshed before they end; accounts connected before migration 0030 come
// back once their token is proven. Against the fake Graph API over real HTTP, one service.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretContext } from '../../src/domain/connected-accounts.ts';
import { deliver, deliverDeps } from '../../src/domain/deliver-message.ts';
import { queueMessage } from '../../src/domain/send-message.ts';
import { checkConnections, checkUnverifiedAtStart } from '../../src/jobs/check-connections.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { connect, eventually, inbound } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { humanPrincipal } from '../rls/fixtures.ts';
import { deliver as deliverMeta, fixture, META_ENV, routed } from '../webhooks/meta.ts';

const PAGE = `31${process.pid}01`;
const PHONE = `32${process.pid}02`;
const IG = `33${process.pid}03`;
const LEGACY_PHONE = `34${process.pid}04`;
const PAGE_TOKEN = 'EAAG-page-token-health';
const WA_TOKEN = 'EAAG-wa-token-health';
const IG_TOKEN = 'IGQ-ig-token-health';
const LEGACY_TOKEN = 'EAAG-legacy-token-health';

let graph: FakeGraph;
let svc: TestService;
let owner: Session;
let stranger: Session;

beforeAll(async () => {
  graph = await startFakeGraph({
    accounts: {
      [PAGE]: { token: PAGE_TOKEN, channel: 'messenger' },
      [PHONE]: { token: WA_TOKEN, channel: 'whatsapp' },
      [IG]: { token: IG_TOKEN, channel: 'instagram' },
      [LEGACY_PHONE]: { token: LEGACY_TOKEN, channel: 'whatsapp' },
    },
  });
  svc = await startTestService({
    ...META_ENV,
    WORKER: 'inline',
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    META_GRAPH_TIMEOUT_MS: '2000',
    // The worker never retries a send during the test: what happens is the attempt the test makes.
    SEND_FIRST_RETRY_SECONDS: '600',
    WORKER_POLL_MS: '500',
  });
  owner = await signUp(svc, 'Healthy Shop');
  stranger = await signUp(svc, 'Stranger Shop');
  await setPlan(svc, owner, 'starter');
  await setPlan(svc, stranger, 'starter');
});
afterAll(async () => {
  await svc?.stop();
  await graph?.close();
});

const principalOf = (s: Session) => humanPrincipal(s.user.id, orgOf(s), 'owner');
const send = (fn: string, s: Session, body: unknown) =>
  call(svc, 'POST', `/functions/v1/${fn}`, { token: s.access_token, body });
const listed = async (s: Session, id: string) => {
  const r = await call(svc, 'GET', '/functions/v1/connected-accounts', { token: s.access_token });
  return (r.json.data as { id: string; status: string; needs_reconnect_reason: string | null }[]).find(
    (a) => a.id === id,
  );
};
const requestsSince = (mark: number) => graph.requests.slice(mark);

describe('a token that stopped working', () => {
  it('a revoked Page token: the check marks the Page with Meta’s reason; sends fail at once with nothing sent to Meta; the list, svc_list_social_accounts and agent-usage show it; connecting again clears it', async () => {
    const page = (await connect(svc, owner, 'facebook', PAGE, PAGE_TOKEN)).id;
    const { contactId } = await inbound(svc, 'messenger', orgOf(owner), page, `psid-${process.pid}`, 1);
    // Queued while the token worked; its attempt comes after the check.
    const { message } = await queueMessage(svc.services, principalOf(owner), {
      channel: 'messenger',
      contact_id: contactId,
      text: 'Your order shipped',
    });

    graph.revokeToken(PAGE_TOKEN);
    const report = await checkConnections(svc.services);
    expect(report.refused).toBe(1);
    const marked = await listed(owner, page);
    expect(marked?.status).toBe('needs_reconnect');
    expect(marked?.needs_reconnect_reason).toMatch(
      /^Facebook stopped accepting this account's token: Error validating access token: The session has been invalidated/,
    );

    // The queued message fails on its attempt without a call, and for good (no retry).
    const mark = graph.requests.length;
    const d = await deliver(deliverDeps(svc.services), {
      organization_id: message.organization_id,
      message_id: message.id,
    });
    expect(d.state).toBe('failed');
    expect(d.message.error).toMatchObject({ type: 'account_needs_reconnect', transient: false });
    expect(requestsSince(mark)).toEqual([]);

    // A new send is refused by name.
    const refused = await send('facebook-send-message', owner, {
      contact_id: contactId,
      text: 'Hello again',
    });
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({
      error: 'account_needs_reconnect',
      details: { account_id: page, provider: 'facebook', external_id: PAGE },
    });
    expect(refused.json.message).toContain('The session has been invalidated');
    expect(requestsSince(mark)).toEqual([]);

    // Agents see it in the account list and in their usage warnings; another organization does not.
    const agent = (await agentToken(svc, owner, ['read'])).token;
    const client = await mcpClient(svc, agent);
    try {
      const listedByAgent = await tool(client, 'svc_list_social_accounts');
      expect(listedByAgent.body.accounts).toEqual([
        expect.objectContaining({
          id: page,
          status: 'needs_reconnect',
          reason: marked?.needs_reconnect_reason,
        }),
      ]);
    } finally {
      await client.close();
    }
    const usage = await call(svc, 'GET', '/functions/v1/agent-usage', { token: agent });
    expect(usage.status).toBe(200);
    expect(usage.json.warnings).toContainEqual(
      expect.objectContaining({ resource: 'connected_account', account_id: page, provider: 'facebook' }),
    );
    const theirs = await call(svc, 'GET', '/functions/v1/agent-usage', { token: stranger.access_token });
    expect(JSON.stringify(theirs.json.warnings)).not.toContain(page);
    // Naming the account from another organization finds nothing: no word about its state.
    const probe = await send('facebook-send-message', stranger, {
      to: 'psid-x',
      account_id: page,
      text: 'hi',
    });
    expect(probe.status).toBe(404);

    // Connecting again with a token that works clears it, and sends go out.
    graph.setAccount(PAGE, { token: 'EAAG-page-token-health-2', channel: 'messenger' });
    await connect(svc, owner, 'facebook', PAGE, 'EAAG-page-token-health-2');
    expect(await listed(owner, page)).toMatchObject({ status: 'connected', needs_reconnect_reason: null });
    const sent = await send('facebook-send-message', owner, { contact_id: contactId, text: 'Back online' });
    expect(sent.status).toBe(201);
    expect(sent.json.message.status).toBe('sent');
  });

  it('Meta’s code 190 on a send marks the account at once: the next send is refused without asking Meta', async () => {
    const phone = (await connect(svc, owner, 'whatsapp', PHONE, WA_TOKEN)).id;
    const { contactId } = await inbound(
      svc,
      'whatsapp',
      orgOf(owner),
      phone,
      `1415${process.pid}`.slice(0, 11),
      1,
    );
    graph.expireToken(WA_TOKEN);
    const first = await send('whatsapp-send-message', owner, { contact_id: contactId, text: 'One' });
    expect(first.json.message?.status ?? first.json.error).toBeDefined();
    const account = await listed(owner, phone);
    expect(account?.status).toBe('needs_reconnect');
    expect(account?.needs_reconnect_reason).toContain('Session has expired');
    const mark = graph.requests.length;
    const second = await send('whatsapp-send-message', owner, { contact_id: contactId, text: 'Two' });
    expect(second.status).toBe(409);
    expect(second.json.error).toBe('account_needs_reconnect');
    expect(requestsSince(mark)).toEqual([]);
  });
});

describe('what the check leaves alone, and what it renews', () => {
  it('a Graph outage (500) during the check changes no account', async () => {
    const state = () =>
      svc.services.db.query(
        `select id, checked_at, verified_at, needs_reconnect_at, needs_reconnect_reason, token_expires_at
           from app.connected_accounts order by id`,
      );
    const before = await state();
    expect(before.length).toBeGreaterThan(0);
    graph.failReadsNext(1000);
    try {
      const report = await checkConnections(svc.services);
      expect(report.refused).toBe(0);
      expect(report.unknown).toBeGreaterThan(0);
    } finally {
      graph.failReadsNext(0);
    }
    expect(await state()).toEqual(before);
  });

  it('an Instagram token near its end is refreshed, stored sealed with its new expiry, and the next send uses it', async () => {
    const ig = (await connect(svc, owner, 'instagram', IG, IG_TOKEN)).id;
    await svc.services.db.query(
      `update app.connected_accounts set token_expires_at = now() + interval '3 days' where id = $1`,
      [ig],
    );
    const report = await checkConnections(svc.services);
    expect(report.refreshed).toBe(1);
    const [row] = await svc.services.db.query<{ days: number; sealed: string }>(
      `select extract(epoch from token_expires_at - now()) / 86400 as days, access_token_encrypted as sealed
         from app.connected_accounts where id = $1`,
      [ig],
    );
    expect(Number(row?.days)).toBeGreaterThan(59);
    expect(row?.sealed).not.toContain('IGQ');

    const { contactId } = await inbound(svc, 'instagram', orgOf(owner), ig, `igsid-${process.pid}`, 1);
    const mark = graph.requests.length;
    const sent = await send('instagram-send-message', owner, { contact_id: contactId, text: 'Thanks!' });
    expect(sent.status).toBe(201);
    expect(sent.json.message.status).toBe('sent');
    const [request] = requestsSince(mark).filter((r) => r.path.endsWith('/messages'));
    expect(request?.headers.authorization).toMatch(/^Bearer IGQfresh/);
  });

  it('an account connected before ownership was proven is proven by the check a worker’s start asks for, and then receives its deliveries', async () => {
    const legacy = await signUp(svc, 'Legacy Shop');
    const org = orgOf(legacy);
    const id = crypto.randomUUID();
    const sealed = svc.services.secrets.seal(LEGACY_TOKEN, secretContext(org, id, 'access_token'));
    // What migration 0030 left of an account connected before it.
    await svc.services.db.query(
      `insert into app.connected_accounts (organization_id, id, provider, external_id, access_token_encrypted,
              needs_reconnect_at, needs_reconnect_reason)
       values ($1, $2, 'whatsapp', $3, $4, now(), 'Connected before the service checked ownership: connect it again to prove access')`,
      [org, id, LEGACY_PHONE, sealed],
    );
    const delivery = (n: string) =>
      deliverMeta(
        svc,
        fixture('wa-text', {
          PHONE_NUMBER_ID: LEGACY_PHONE,
          WA_ID: '14155550123',
          TEXT_ID: `LEGACY${n}${process.pid}`,
        }),
      );
    const received = async () =>
      (
        await svc.services.db.query<{ n: number }>(
          `select count(*)::int as n from messages where organization_id = $1 and direction = 'in'`,
          [org],
        )
      )[0]?.n ?? 0;

    expect((await delivery('1')).status).toBe(200);
    // Routed (by the inline worker's router) while the account is still unproven: dropped.
    await routed(svc);
    expect(await received()).toBe(0);

    await checkUnverifiedAtStart(svc.services);
    const proven = await eventually(async () => {
      const [row] = await svc.services.db.query<{
        verified_by: string | null;
        needs_reconnect_at: Date | null;
        checked_at: Date | null;
      }>('select verified_by, needs_reconnect_at, checked_at from app.connected_accounts where id = $1', [
        id,
      ]);
      return row?.verified_by ? row : null;
    }, 20_000);
    expect(proven).toMatchObject({ verified_by: 'token', needs_reconnect_at: null });

    expect((await delivery('2')).status).toBe(200);
    await eventually(async () => (await received()) === 1, 20_000);
    // The one that arrived is the delivery after the proof; the one before it never landed here.
    const [landed] = await svc.services.db.query<{ provider_message_id: string }>(
      `select provider_message_id from messages where organization_id = $1 and direction = 'in'`,
      [org],
    );
    expect(landed?.provider_message_id).toBe(`wamid.LEGACY2${process.pid}`);
  });

  it('an account whose token now acts for another id is not proven, and stays marked', async () => {
    const other = await signUp(svc, 'Wrong Token Shop');
    const org = orgOf(other);
    const id = crypto.randomUUID();
    // The Page's token, claimed for the WhatsApp number: the phone read refuses it.
    const sealed = svc.services.secrets.seal(
      'EAAG-page-token-health-2',
      secretContext(org, id, 'access_token'),
    );
    await svc.services.db.query(
      `insert into app.connected_accounts (organization_id, id, provider, external_id, access_token_encrypted,
              needs_reconnect_at, needs_reconnect_reason)
       values ($1, $2, 'whatsapp', $3, $4, now(), 'Connected before the service checked ownership: connect it again to prove access')`,
      [org, id, LEGACY_PHONE, sealed],
    );
    await checkConnections(svc.services, { unverifiedOnly: true });
    const [row] = await svc.services.db.query<{ verified_at: Date | null; needs_reconnect_reason: string }>(
      'select verified_at, needs_reconnect_reason from app.connected_accounts where id = $1',
      [id],
    );
    expect(row?.verified_at).toBeNull();
    expect(row?.needs_reconnect_reason).toMatch(/^WhatsApp stopped accepting this account's token: /);
  });
});
