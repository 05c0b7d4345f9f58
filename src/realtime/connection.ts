import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { Database } from '../platform/db/database.ts';
import { claimedOrganization, type Principal } from '../platform/db/database.ts';
import { principalFromClaims } from '../platform/http/authenticate.ts';
import { type MeterDeps, meterCall } from '../platform/http/meter.ts';
import { TokenError, type Tokens } from '../platform/jwt.ts';
import type { Logger } from '../platform/log.ts';
import type { SchemaCache } from '../rest/schema-cache.ts';
import { mayRead } from './changes.ts';
import type { Hub, Joined } from './hub.ts';
import { bindChanges } from './join.ts';
import { decode, encode, type Message, reply, type Vsn } from './protocol.ts';

export type ConnectionDeps = {
  db: Database;
  schema: SchemaCache;
  tables: Set<string>;
  tokens: Tokens;
  meter: MeterDeps;
  hub: Hub;
  log: Logger;
  limits: RealtimeLimits;
};

export type RealtimeLimits = {
  socketsPerAddress: number;
  channelsPerSocket: number;
  channelsPerOrganization: number;
  broadcastBytes: number;
};

/**
 * A channel's principal from its access token: a person or an agent of an organization. No
 * token, or the anon key, is an anonymous channel (as Supabase joins it with the socket's
 * apikey): joined, and sent nothing until a person's token arrives (`access_token`).
 */
async function principalOfToken(tokens: Tokens, token: unknown): Promise<Principal | null | string> {
  if (typeof token !== 'string' || !token) return null;
  try {
    const principal = principalFromClaims(await tokens.verify(token));
    if (principal.kind === 'anon') return null;
    if ((principal.kind === 'user' || principal.kind === 'agent') && claimedOrganization(principal))
      return principal;
    return 'Realtime needs a token of a person or an agent of an organization';
  } catch (err) {
    return err instanceof TokenError && err.reason === 'expired' ? 'Token has expired' : 'Invalid token';
  }
}

type Channel = Joined & { timer?: NodeJS.Timeout; ack: boolean };

const ANON: Principal = { kind: 'anon', claims: { role: 'anon' } };

const MAX_TIMER_MS = 2 ** 31 - 1;
const UNHEARD = 'Changes cannot be heard right now; join again in a moment';
const expiresAt = (p: Principal) => (typeof p.claims.exp === 'number' ? p.claims.exp * 1000 : Infinity);

/**
 * One websocket: heartbeats, joins (each checked with the channel's own access token, counted
 * as one API call), leaves, access-token refreshes and broadcasts, as realtime-js sends them.
 * A channel is closed when its token expires or its access is revoked (hub.ts).
 */
export function serveConnection(ws: WebSocket, vsn: Vsn, d: ConnectionDeps) {
  const socketId = randomUUID();
  const channels = new Map<string, Channel>();
  const send = (m: Message) => {
    if (ws.readyState === ws.OPEN) ws.send(encode(vsn, m));
  };
  const system = (
    topic: string,
    joinRef: string | null,
    status: 'ok' | 'error',
    message: string,
    ext = 'system',
  ) =>
    send({
      joinRef,
      ref: null,
      topic,
      event: 'system',
      payload: { extension: ext, status, message, channel: topic.replace(/^realtime:/, '') },
    });

  const drop = (topic: string) => {
    const ch = channels.get(topic);
    if (!ch) return;
    clearTimeout(ch.timer);
    channels.delete(topic);
    d.hub.remove(ch);
  };
  // A timer waits at most 2^31 - 1 ms (~24.8 days; longer fires at once): a longer-lived token
  // is looked at again then.
  const expireAt = (ch: Channel) => {
    clearTimeout(ch.timer);
    const wait = expiresAt(ch.principal) - Date.now();
    if (!Number.isFinite(wait)) return;
    const check = () =>
      expiresAt(ch.principal) <= Date.now() ? ch.close('Token has expired') : expireAt(ch);
    ch.timer = setTimeout(check, Math.min(Math.max(0, wait), MAX_TIMER_MS));
    ch.timer.unref();
  };

  /**
   * Why `principal` may not hear `org`'s changes (not a member now, or the organization's
   * channels are at their limit), or null; every admission counts as one API call
   * (docs/decisions.md, "What counts against api_calls_per_day").
   */
  async function refusal(principal: Principal, org: string): Promise<string | null> {
    if (!(await mayRead(d.db, principal, org))) return 'The token may not read this organization';
    if (d.hub.count(org) >= d.limits.channelsPerOrganization)
      return `An organization may hold at most ${d.limits.channelsPerOrganization} channels here`;
    try {
      await meterCall(d.meter, principal);
    } catch (err) {
      return (err as Error).message;
    }
    return null;
  }

  /** Adds the channel to the hub: false when this process cannot hear changes now. */
  async function heard(ch: Channel): Promise<boolean> {
    try {
      await d.hub.add(ch);
      return true;
    } catch (err) {
      d.log.warn({ err: { message: (err as Error).message } }, 'realtime could not listen');
      return false;
    }
  }

  async function join(m: Message) {
    if (channels.has(m.topic)) drop(m.topic); // a rejoin replaces the channel, as Phoenix does
    if (channels.size >= d.limits.channelsPerSocket)
      return send(
        reply(m, 'error', { reason: `A socket may join at most ${d.limits.channelsPerSocket} channels` }),
      );
    const principal = await principalOfToken(d.tokens, m.payload.access_token);
    if (typeof principal === 'string') return send(reply(m, 'error', { reason: principal }));
    const org = principal && claimedOrganization(principal);
    const refused = principal && org ? await refusal(principal, org) : null;
    if (refused) return send(reply(m, 'error', { reason: refused }));
    const config = (m.payload.config ?? {}) as Record<string, unknown>;
    const bound = await bindChanges(d, config.postgres_changes);
    if (typeof bound === 'string') return send(reply(m, 'error', { reason: bound }));
    const broadcast = (config.broadcast ?? {}) as { self?: unknown; ack?: unknown };
    const ch: Channel = {
      topic: m.topic,
      joinRef: m.joinRef ?? m.ref,
      org: org ?? null,
      principal: principal ?? ANON,
      subs: bound.subs,
      broadcastSelf: broadcast.self === true,
      ack: broadcast.ack === true,
      socketId,
      send,
      close: (reason) => {
        if (channels.get(m.topic) !== ch) return;
        drop(m.topic);
        system(m.topic, ch.joinRef, 'error', reason);
        send({ joinRef: ch.joinRef, ref: null, topic: m.topic, event: 'phx_close', payload: {} });
      },
    };
    channels.set(m.topic, ch);
    // Confirmed only once this process hears what is committed from now on.
    if (!(await heard(ch))) {
      if (channels.get(m.topic) === ch) drop(m.topic);
      return send(reply(m, 'error', { reason: UNHEARD }));
    }
    if (channels.get(m.topic) !== ch) return; // left or joined again meanwhile
    expireAt(ch);
    send(reply(m, 'ok', { postgres_changes: bound.bound }));
    if (bound.subs.length) system(m.topic, ch.joinRef, 'ok', 'Subscribed to PostgreSQL', 'postgres_changes');
  }

  /**
   * `access_token`: the channel goes on under the new token, or is closed saying why. A token of
   * another organization (the person switched) moves the channel there, admitted as a join is.
   */
  async function refresh(m: Message, ch: Channel) {
    const principal = await principalOfToken(d.tokens, m.payload.access_token);
    if (typeof principal === 'string') return ch.close(principal);
    if (!principal) {
      if (ch.org) ch.close('The new token is not of a person or an agent');
      return;
    }
    const org = claimedOrganization(principal) as string;
    if (org !== ch.org) {
      const refused = await refusal(principal, org);
      if (refused) return ch.close(refused);
      d.hub.remove(ch);
      ch.org = org;
      ch.principal = principal;
      if (!(await heard(ch))) return ch.close(UNHEARD);
    }
    ch.principal = principal;
    expireAt(ch);
  }

  async function handle(m: Message) {
    const ch = channels.get(m.topic);
    if (m.topic === 'phoenix' && m.event === 'heartbeat') return send(reply(m, 'ok'));
    if (m.event === 'phx_join') return join(m);
    if (!ch) return send(reply(m, 'error', { reason: 'Join the channel first' }));
    if (m.event === 'phx_leave') {
      drop(m.topic);
      return send(reply(m, 'ok'));
    }
    if (m.event === 'access_token') return refresh(m, ch);
    if (m.event === 'broadcast') {
      const { event, payload } = m.payload as { event?: unknown; payload?: unknown };
      const size = Buffer.byteLength(JSON.stringify(payload ?? null));
      if (typeof event !== 'string' || size > d.limits.broadcastBytes)
        return send(
          reply(m, 'error', {
            reason: `A broadcast carries an event name and at most ${d.limits.broadcastBytes} bytes`,
          }),
        );
      if (!ch.org) return send(reply(m, 'error', { reason: 'Sign in to broadcast' }));
      await d.hub.publish({ ...ch, org: ch.org }, event, payload ?? null);
      if (ch.ack) send(reply(m, 'ok'));
      return;
    }
    // Presence is not offered (docs/realtime.md): acknowledged so a client's track() resolves.
    return send(reply(m, 'ok'));
  }

  // Messages of one socket are handled in order: a refresh never overtakes the join before it.
  let turn: Promise<void> = Promise.resolve();
  ws.on('message', (data, binary) => {
    const m = decode(data as Buffer, binary);
    if (!m) return ws.close(1003, 'Malformed message');
    turn = turn
      .then(
        () => handle(m),
        () => handle(m),
      )
      .catch((err) => {
        d.log.warn({ err: { message: (err as Error).message } }, 'realtime message failed');
        send(reply(m, 'error', { reason: 'The service could not handle this message' }));
      });
  });
  ws.on('close', () => {
    for (const topic of [...channels.keys()]) drop(topic);
  });
}
