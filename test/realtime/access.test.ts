// Who keeps a channel (docs/realtime.md): a refreshed token keeps it past the first token's
// expiry, an expired one closes it; a membership that ends, or an agent key revoked, closes the
// channels it held at once; broadcasts reach the organization's channels on that topic only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, inviteAndAccept, type Session, signUp } from '../helpers/http.ts';
import { agentToken } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { clientFor, closeAll, subscribe } from './subscriber.ts';

let svc: TestService;
let owner: Session;
const clients: ReturnType<typeof clientFor>[] = [];
const client = (token: string) => {
  const c = clientFor(svc, token);
  clients.push(c);
  return c;
};

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Access Shop');
});
afterAll(async () => {
  await closeAll(clients);
  await svc?.stop();
});

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString());
const addContact = (token: string, first_name: string) =>
  call(svc, 'POST', '/rest/v1/contacts', {
    token,
    body: { first_name },
    headers: { prefer: 'return=representation' },
  });

describe('tokens', () => {
  it('a refreshed token keeps the channel past the first token’s expiry; an expired one closes it', async () => {
    const { exp: _exp, iat: _iat, ...claims } = claimsOf(owner.access_token);
    const shortLived = await svc.services.tokens.sign(claims, 2);
    const refreshed = client(shortLived);
    const kept = await subscribe(refreshed, { table: 'contacts' });
    const left = await subscribe(client(shortLived), { table: 'contacts' });
    await refreshed.useToken(await svc.services.tokens.sign(claims, 3600));
    await left.until('CLOSED');
    expect(left.systems.at(-1)).toMatchObject({ status: 'error', message: 'Token has expired' });
    const row = await addContact(owner.access_token, 'After expiry');
    expect((await kept.next()).new).toMatchObject({ id: row.json[0].id });
    expect(kept.statuses).not.toContain('CLOSED');
  });

  it('a token living longer than 25 days (JWT_EXPIRY_SECONDS may say so) keeps its channel', async () => {
    const { exp: _exp, iat: _iat, ...claims } = claimsOf(owner.access_token);
    const sub = await subscribe(client(await svc.services.tokens.sign(claims, 30 * 24 * 3600)), {
      table: 'contacts',
    });
    const row = await addContact(owner.access_token, 'Long-lived');
    expect((await sub.next()).new).toMatchObject({ id: row.json[0].id });
    expect(sub.statuses).not.toContain('CLOSED');
  });

  it('a refresh with a token of no one closes the channel', async () => {
    const c = client(owner.access_token);
    const sub = await subscribe(c, { table: 'contacts' });
    await c.useToken('not-a-token');
    await sub.until('CLOSED');
    expect(sub.systems.at(-1)).toMatchObject({ status: 'error', message: 'Invalid token' });
  });

  it("a token of the person's other organization moves the channel there", async () => {
    const person = await signUp(svc, 'First Venture');
    const created = await call(svc, 'POST', '/functions/v1/organization-create', {
      token: person.access_token,
      body: { name: 'Second Venture' },
    });
    const c = client(person.access_token);
    const sub = await subscribe(c, { table: 'contacts', event: 'INSERT' });
    const switched = await call(svc, 'POST', '/functions/v1/organization-switch', {
      token: person.access_token,
      body: { organization_id: created.json.organization.id },
    });
    await c.useToken(switched.json.access_token);
    // A socket's messages are handled in order: once a later join is answered, the token is in.
    await subscribe(c, { table: 'orders' });
    await addContact(person.access_token, 'Left behind');
    const there = await addContact(switched.json.access_token, 'Over here');
    expect((await sub.next()).new).toMatchObject({ id: there.json[0].id, first_name: 'Over here' });
    expect(sub.pending()).toBe(0);
  });
});

describe('revocation', () => {
  it("a removed member's channel is closed at once, and hears nothing more", async () => {
    const person = await signUp(svc);
    const token = await inviteAndAccept(svc, owner, person, 'member');
    const sub = await subscribe(client(token), { table: 'contacts' });
    const before = await addContact(owner.access_token, 'Seen');
    expect((await sub.next()).new).toMatchObject({ id: before.json[0].id });
    const removed = await call(svc, 'DELETE', '/functions/v1/organization-members', {
      token: owner.access_token,
      body: { user_id: person.user.id },
    });
    expect(removed.status).toBe(204);
    await sub.until('CLOSED');
    expect(sub.systems.at(-1)).toMatchObject({
      status: 'error',
      message: 'Access to this organization was revoked',
    });
    await addContact(owner.access_token, 'Unseen');
    expect(sub.pending()).toBe(0);
  });

  it("a revoked agent key's channel is closed", async () => {
    const agent = await agentToken(svc, owner, ['read']);
    const sub = await subscribe(client(agent.token), { table: 'contacts' });
    const keys = await call(
      svc,
      'GET',
      `/rest/v1/agent_api_keys?key_prefix=eq.${agent.keyPrefix}&select=id`,
      {
        token: owner.access_token,
      },
    );
    const revoked = await call(svc, 'PATCH', `/rest/v1/agent_api_keys?id=eq.${keys.json[0].id}`, {
      token: owner.access_token,
      body: { is_active: false },
    });
    expect(revoked.status).toBeLessThan(300);
    await sub.until('CLOSED');
    expect(sub.systems.at(-1)).toMatchObject({ status: 'error' });
  });
});

/** A channel on `topic` of `token`'s client, subscribed; `heard()` resolves with the next broadcast. */
async function room(token: string, topic: string) {
  const c = client(token);
  await c.realtime.setAuth();
  const got: unknown[] = [];
  const waiting: ((m: unknown) => void)[] = [];
  const ch = c.channel(topic, { config: { broadcast: { ack: true } } });
  ch.on('broadcast', { event: 'typing' }, (m) => {
    const w = waiting.shift();
    if (w) w(m.payload);
    else got.push(m.payload);
  });
  await new Promise<void>((resolve) => ch.subscribe((s) => s === 'SUBSCRIBED' && resolve()));
  return {
    send: (payload: unknown) => ch.send({ type: 'broadcast', event: 'typing', payload }),
    heard: () =>
      new Promise<unknown>((resolve) => (got.length ? resolve(got.shift()) : waiting.push(resolve))),
    pending: () => got.length,
  };
}

describe('broadcast', () => {
  it("reaches the organization's other channels on the topic, never another organization's", async () => {
    const stranger = await signUp(svc, 'Elsewhere');
    const mine = await room(owner.access_token, 'room-1');
    const theirs = await room(stranger.access_token, 'room-1');
    const sender = await room(owner.access_token, 'room-1');
    const strangerSender = await room(stranger.access_token, 'room-1');
    expect(await sender.send({ who: 'owner' })).toBe('ok');
    expect(await mine.heard()).toEqual({ who: 'owner' });
    // Broadcasts are delivered in order: the stranger's own comes after the owner's would have.
    expect(await strangerSender.send({ who: 'stranger' })).toBe('ok');
    expect(await theirs.heard()).toEqual({ who: 'stranger' });
    expect(sender.pending()).toBe(0); // not to itself without config.broadcast.self
  });

  it('a broadcast larger than the limit is refused', async () => {
    const sender = await room(owner.access_token, 'room-2');
    expect(await sender.send({ blob: 'x'.repeat(7000) })).toBe('error');
  });
});
