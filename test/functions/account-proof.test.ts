// Connected accounts are proven, not claimed (issue 27, the probe's high finding). What this file
// protects: a pasted token is checked with the provider before anything is stored, and the app is
// subscribed to the account's webhooks at connect; a stranger with a junk token stores nothing
// and receives nothing; another organization's claim never shows in an answer nor blocks a
// connect; the newest proof receives deliveries, so the owner can always take them back; each
// organization sends with its own token. Against the fake Graph API, which knows which token acts
// for which id (an agency's Page token acts for the Page beside the business's own).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeOf } from '../../src/domain/connected-accounts.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { call, inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { inbound } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { deliver, fixture, META_ENV, processPending } from '../webhooks/meta.ts';

const PAGE = '108000000000001';
const OTHER_PAGE = '108000000000002';
const PHONE = '106000000000001';
const IG = '17841400000000001';
const OWNER_TOKEN = 'EAAG-business-page-token';
const AGENCY_TOKEN = 'EAAG-agency-page-token';
/** A Page token is one Page's: the agency's for the other Page is another token. */
const AGENCY_OTHER_TOKEN = 'EAAG-agency-other-page-token';
const WA_TOKEN = 'EAAG-whatsapp-system-user-token';
const IG_TOKEN = 'IGAA-instagram-login-token';

let graph: FakeGraph;
let svc: TestService;
let business: Session;
let agency: Session;
let stranger: Session;
let seq = 0;

beforeAll(async () => {
  graph = await startFakeGraph({
    accounts: {
      [PAGE]: { token: OWNER_TOKEN, tokens: [AGENCY_TOKEN], channel: 'messenger', name: 'Corner Bakery' },
      [OTHER_PAGE]: { token: 'EAAG-someone-elses-page', tokens: [AGENCY_OTHER_TOKEN], channel: 'messenger' },
      [PHONE]: { token: WA_TOKEN, channel: 'whatsapp', name: 'Corner Bakery' },
      [IG]: { token: IG_TOKEN, channel: 'instagram', name: 'cornerbakery' },
    },
  });
  svc = await startTestService({
    ...META_ENV,
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    META_GRAPH_TIMEOUT_MS: '1000',
  });
  business = await signUp(svc, 'Corner Bakery');
  agency = await signUp(svc, 'Agency');
  stranger = await signUp(svc, 'Stranger');
  for (const s of [business, agency]) await setPlan(svc, s, 'starter');
});
afterAll(async () => {
  await svc?.stop();
  await graph?.close();
});

const connect = (s: Session | string, body: Record<string, unknown>) =>
  call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: typeof s === 'string' ? s : s.access_token,
    body: { provider: 'facebook', external_id: PAGE, ...body },
  });
const disconnect = (s: Session, id: string) =>
  call(svc, 'DELETE', '/functions/v1/connected-accounts', { token: s.access_token, body: { id } });
const rowsOf = async (s: Session) =>
  (
    await svc.services.db.query<{ n: number }>(
      'select count(*)::int as n from app.connected_accounts where organization_id = $1',
      [orgOf(s)],
    )
  )[0]?.n;
/** A signed Messenger delivery for PAGE with a message of its own id; processed at once. */
async function customerWrites(): Promise<string> {
  const mid = `m_proof_${process.pid}_${++seq}`;
  const body = fixture('messenger-message', {
    PAGE_ID: PAGE,
    PSID: '6789012345678901',
    m_MESSENGER_TEXT_ID: mid,
  });
  expect((await deliver(svc, body, { path: 'meta-webhook' })).status).toBe(200);
  await processPending(svc);
  return mid;
}
/** The messages a session's organization can read with that provider id (GET /rest/v1/messages). */
async function sees(s: Session, mid: string) {
  const r = await call(svc, 'GET', `/rest/v1/messages?provider_message_id=eq.${mid}&select=body`, {
    token: s.access_token,
  });
  expect(r.status).toBe(200);
  return r.json.length > 0;
}
/** An answer with the ids that differ between two accounts taken out, to compare shapes and words. */
const shape = (json: Record<string, unknown>, ...ids: string[]) => {
  let text = JSON.stringify(json, (k, v) => (/_at$|^id$|^organization_id$|^created_by$/.test(k) ? '·' : v));
  for (const id of ids) text = text.split(id).join('ID');
  return text;
};

describe('the probe’s repro', () => {
  it('a junk token for a Page someone disconnected stores nothing, receives nothing, and the owner reconnects', async () => {
    const mine = await connect(business, { access_token: OWNER_TOKEN });
    expect(mine.status).toBe(201);
    expect(mine.json).toMatchObject({ status: 'connected', verified_by: 'token', name: 'Corner Bakery' });
    expect((await disconnect(business, mine.json.id)).status).toBe(200);

    const junk = await connect(stranger, { access_token: 'EAAG-junk' });
    expect(junk.status).toBe(403);
    expect(junk.json).toMatchObject({
      error: 'account_not_verified',
      details: { provider: 'facebook', external_id: PAGE, provider_error: { code: 190 } },
    });
    expect(junk.json.details.check).toMatch(/^GET \//);
    expect(junk.json.message).toMatch(/can't act for Page/);
    expect(JSON.stringify(junk.json)).not.toContain('EAAG-junk');
    expect(await rowsOf(stranger)).toBe(0);

    // Meta's delivery for the Page reaches no one: the stranger's claim was never stored.
    const lost = await customerWrites();
    expect(await sees(stranger, lost)).toBe(false);

    const back = await connect(business, { access_token: OWNER_TOKEN });
    expect(back.status).toBe(201);
    expect(back.json.id).toBe(mine.json.id);
    const mid = await customerWrites();
    expect(await sees(business, mid)).toBe(true);
    expect(await sees(stranger, mid)).toBe(false);
  });

  it('only owners and admins reach the provider: a member is refused before anything is asked', async () => {
    const member = await inviteAndAccept(svc, stranger, await signUp(svc), 'member');
    graph.reset();
    const r = await connect(member, { access_token: OWNER_TOKEN });
    expect(r.status).toBe(403);
    expect(r.json.error).not.toBe('account_not_verified');
    expect(graph.requests).toHaveLength(0);
  });
});

describe('no oracle, no blocking', () => {
  it('a junk token for a Page claimed elsewhere is answered exactly as for a Page no one claimed', async () => {
    await connect(business, { access_token: OWNER_TOKEN });
    const claimed = await connect(stranger, { access_token: 'EAAG-junk-2' });
    const unclaimed = await connect(stranger, { external_id: OTHER_PAGE, access_token: 'EAAG-junk-2' });
    expect(claimed.status).toBe(403);
    expect(unclaimed.status).toBe(403);
    expect(shape(claimed.json, PAGE)).toBe(shape(unclaimed.json, OTHER_PAGE));
  });

  it('an agency whose token acts for the Page connects it while the business has it live: 201, no hint of the business', async () => {
    const theirs = await connect(business, { access_token: OWNER_TOKEN });
    const claimed = await connect(agency, { access_token: AGENCY_TOKEN });
    const unclaimed = await connect(agency, { external_id: OTHER_PAGE, access_token: AGENCY_OTHER_TOKEN });
    expect(claimed.status).toBe(201);
    expect(unclaimed.status).toBe(201);
    expect(claimed.json.organization_id).toBe(orgOf(agency));
    expect(JSON.stringify(claimed.json)).not.toContain(theirs.json.id);
    expect(JSON.stringify(claimed.json)).not.toContain(orgOf(business));
    expect(Object.keys(claimed.json).sort()).toEqual(Object.keys(unclaimed.json).sort());
    // Still the business's too.
    const list = await call(svc, 'GET', '/functions/v1/connected-accounts', { token: business.access_token });
    expect(list.json.data.find((a: { external_id: string }) => a.external_id === PAGE)?.status).toBe(
      'connected',
    );
  });
});

describe('who receives an account’s deliveries', () => {
  it('the newest proof receives; the business connecting again takes its deliveries back', async () => {
    await connect(business, { access_token: OWNER_TOKEN });
    await connect(agency, { access_token: AGENCY_TOKEN });
    const toAgency = await customerWrites();
    expect(await sees(agency, toAgency)).toBe(true);
    expect(await sees(business, toAgency)).toBe(false);

    expect((await connect(business, { access_token: OWNER_TOKEN })).status).toBe(201);
    const toBusiness = await customerWrites();
    expect(await sees(business, toBusiness)).toBe(true);
    expect(await sees(agency, toBusiness)).toBe(false);
  });

  it('a healthy claim before one needing reconnect; that one still receives alone; an unproven one never', async () => {
    await connect(agency, { access_token: AGENCY_TOKEN });
    await connect(business, { access_token: OWNER_TOKEN });
    const mark = (s: Session, set: string) =>
      svc.services.db.query(
        `update app.connected_accounts set ${set} where organization_id = $1 and provider = 'facebook'
            and external_id = $2 and disconnected_at is null`,
        [orgOf(s), PAGE],
      );
    await mark(business, "needs_reconnect_at = now(), needs_reconnect_reason = 'Token expired'");
    expect((await routeOf(svc.services, 'facebook', PAGE))?.organization_id).toBe(orgOf(agency));
    await mark(agency, 'verified_at = null, verified_by = null');
    expect((await routeOf(svc.services, 'facebook', PAGE))?.organization_id).toBe(orgOf(business));
    await mark(business, 'verified_at = null, verified_by = null');
    expect(await routeOf(svc.services, 'facebook', PAGE)).toBeNull();
    // Connecting again proves it anew and clears needs_reconnect.
    const again = await connect(business, { access_token: OWNER_TOKEN });
    expect(again.json).toMatchObject({
      status: 'connected',
      needs_reconnect_reason: null,
      verified_by: 'token',
    });
    expect((await routeOf(svc.services, 'facebook', PAGE))?.organization_id).toBe(orgOf(business));
  });
});

describe('each organization sends with its own token', () => {
  it('the business and the agency on one Page: Meta sees each one’s own Page token', async () => {
    const b = await connect(business, { access_token: OWNER_TOKEN });
    const a = await connect(agency, { access_token: AGENCY_TOKEN });
    const tokens: Record<string, string> = {};
    for (const [s, account] of [
      [business, b.json.id],
      [agency, a.json.id],
    ] as const) {
      const psid = `${7100000000000000 + ++seq}`;
      const { contactId } = await inbound(svc, 'messenger', orgOf(s), account, psid, 1);
      graph.reset();
      const r = await call(svc, 'POST', '/functions/v1/facebook-send-message', {
        token: s.access_token,
        body: { contact_id: contactId, account_id: account, text: 'Your order is ready' },
      });
      expect(r.status).toBe(201);
      expect(r.json.message.status).toBe('sent');
      tokens[orgOf(s)] = graph.sent()[0]?.headers.authorization ?? '';
    }
    expect(tokens[orgOf(business)]).toBe(`Bearer ${OWNER_TOKEN}`);
    expect(tokens[orgOf(agency)]).toBe(`Bearer ${AGENCY_TOKEN}`);
  });
});

describe('each provider’s check and subscription', () => {
  it('Facebook: the app is subscribed to the Page’s messages with the Page token', async () => {
    graph.reset();
    expect((await connect(business, { access_token: OWNER_TOKEN })).status).toBe(201);
    expect(graph.subscriptions(PAGE)).toEqual(expect.arrayContaining(['messages']));
    const sub = graph.requests.find((r) => r.path.endsWith(`/${PAGE}/subscribed_apps`));
    expect(sub?.method).toBe('POST');
    expect(sub?.headers.authorization).toBe(`Bearer ${OWNER_TOKEN}`);
  });

  it('WhatsApp: the phone number read with the token, its WABA from debug_token, the WABA subscribed', async () => {
    const junk = await connect(business, {
      provider: 'whatsapp',
      external_id: PHONE,
      access_token: 'EAAG-junk',
    });
    expect(junk.status).toBe(403);
    expect(junk.json.details.check).toMatch(new RegExp(`^GET /${PHONE}\\?fields=`));
    const r = await connect(business, { provider: 'whatsapp', external_id: PHONE, access_token: WA_TOKEN });
    expect(r.status).toBe(201);
    expect(r.json.name).toBe('Corner Bakery');
    expect(graph.subscriptions(`waba-${PHONE}`)).not.toBeNull();
    expect(graph.requests.some((q) => q.path.endsWith('/debug_token'))).toBe(true);
  });

  it('Instagram: /me must be that account; the app is subscribed to its messages', async () => {
    const other = await connect(business, { provider: 'instagram', external_id: IG, access_token: WA_TOKEN });
    expect(other.status).toBe(403);
    expect(other.json.details).toMatchObject({ provider: 'instagram', external_id: IG });
    const r = await connect(business, { provider: 'instagram', external_id: IG, access_token: IG_TOKEN });
    expect(r.status).toBe(201);
    expect(r.json.name).toBe('cornerbakery');
    expect(graph.subscriptions(IG)).toEqual(['messages']);
  });

  it('an expired or revoked token is refused with Meta’s code 190 and subcode', async () => {
    const token = `EAAG-expiring-${++seq}`;
    graph.setAccount(OTHER_PAGE, { token, channel: 'messenger' });
    graph.expireToken(token);
    const r = await connect(stranger, { external_id: OTHER_PAGE, access_token: token });
    expect(r.status).toBe(403);
    expect(r.json.details.provider_error).toMatchObject({
      code: 190,
      message: expect.stringMatching(/expired/),
    });
    const debug = await fetch(
      `${graph.url}/${svc.services.config.graph.version}/debug_token?input_token=${token}&access_token=${encodeURIComponent('app|secret')}`,
    );
    expect((await debug.json()).data).toMatchObject({ is_valid: false, error: { code: 190, subcode: 463 } });
    graph.revokeToken(OWNER_TOKEN);
    const revoked = await connect(business, { access_token: OWNER_TOKEN });
    expect(revoked.status).toBe(403);
    graph.reset();
  });

  it('the provider out of reach: 502 provider_error and nothing stored', async () => {
    graph.setLatency(1500);
    try {
      const r = await connect(stranger, { external_id: OTHER_PAGE, access_token: 'EAAG-someone-elses-page' });
      expect(r.status).toBe(502);
      expect(r.json).toMatchObject({ error: 'provider_error', details: { provider: 'facebook' } });
      expect(await rowsOf(stranger)).toBe(0);
    } finally {
      graph.setLatency(0);
    }
  });
});
