import type { Database, Principal } from '../platform/db/database.ts';
import type { Logger } from '../platform/log.ts';
import type { SchemaCache } from '../rest/schema-cache.ts';
import { type Change, mayRead, parseChange, readFor, type Subscription, wants } from './changes.ts';
import { realtimeInterest } from './interest.ts';
import type { Message } from './protocol.ts';
import { changeColumns, offered } from './tables.ts';

/** A channel joined on one socket of this process: who it acts for and what it listens to. */
export type Joined = {
  topic: string;
  joinRef: string | null;
  /** null: an anonymous channel (no person's token yet), which hears nothing. */
  org: string | null;
  principal: Principal;
  subs: Subscription[];
  /** config.broadcast.self: the sender hears its own broadcasts. */
  broadcastSelf: boolean;
  /** Its socket's id in this process (a broadcast skips the sender's own channel). */
  socketId: string;
  send(m: Message): void;
  /** Tells the client why (a `system` error) and closes the channel (`phx_close`). */
  close(reason: string): void;
};

/**
 * The one channel realtime LISTENs on (a LISTEN holds a connection of its own on PostgreSQL):
 * changes and access notices from the database (migrations/0046), broadcasts from the processes.
 */
export const REALTIME_CHANNEL = 'svc_realtime';
type BroadcastNotice = { org: string; topic: string; event: string; payload: unknown; from: string };

/**
 * Every joined channel of this process, by organization, and what reaches them: each change
 * announced by the database (migrations/0046) is read once per distinct principal subscribed to
 * its table in its organization (changes.ts), then pushed to that principal's channels; changes
 * are handled one after another, so a channel sees them in commit order. Broadcasts travel
 * through NOTIFY too, so a channel hears those sent on another process.
 */
export function createHub(deps: {
  db: Database;
  schema: SchemaCache;
  tables: Set<string>;
  log: Logger;
  /** How long the LISTEN outlives the last channel (a page reload leaves and joins again). */
  lingerMs: number;
}) {
  const byOrg = new Map<string, Set<Joined>>();
  let queue: Promise<void> = Promise.resolve();
  // The LISTEN is held only while a channel here is in an organization (docs/decisions.md,
  // "LISTEN only with a channel"): every write of an offered table, any tenant's, notifies every
  // listening process, and one with no channel woke for each only to drop it.
  let listening: Promise<() => Promise<void>> | undefined;
  let linger: NodeJS.Timeout | undefined;
  // And writes notify only in organizations some process has a channel in (interest.ts).
  const interest = realtimeInterest(
    deps.db,
    () => byOrg.keys(),
    (err) => deps.log.warn({ err: { message: (err as Error).message } }, 'realtime interest not refreshed'),
  );

  /** Resolves once this process hears svc_realtime (at once when it already does). */
  function hear(): Promise<unknown> {
    clearTimeout(linger);
    if (!listening) {
      const started = deps.db.listen(REALTIME_CHANNEL, onNotice);
      listening = started;
      started.catch(() => {
        if (listening === started) listening = undefined; // the next join tries again
      });
    }
    return listening;
  }

  function stopHearing() {
    const held = listening;
    listening = undefined;
    return held?.then((stop) => stop()).catch(() => {});
  }

  /**
   * A NOTIFY of svc_realtime, by its `kind`. None (notices may have been lost while the LISTEN
   * connection was away): every channel's access is checked again; lost changes stay lost.
   */
  function onNotice(payload?: string) {
    if (byOrg.size === 0) return; // the last channel left; the LISTEN lingers
    if (payload === undefined) return void recheck(() => true);
    let notice: Record<string, unknown>;
    try {
      notice = JSON.parse(payload);
    } catch {
      return;
    }
    if (notice.kind === 'change') onChange(notice);
    else if (notice.kind === 'access') onAccess(notice);
    else if (notice.kind === 'broadcast') onBroadcast(notice as BroadcastNotice);
  }

  async function deliver(change: Change) {
    const channels = byOrg.get(change.org);
    if (!channels) return;
    const rel = offered(deps.tables, deps.schema, change.table);
    if (!rel) return;
    const byPrincipal = new Map<Principal, { subs: Subscription[]; channels: Joined[] }>();
    for (const ch of channels) {
      const subs = ch.subs.filter((s) => wants(s, change));
      if (!subs.length) continue;
      let group = byPrincipal.get(ch.principal);
      if (!group) {
        group = { subs: [], channels: [] };
        byPrincipal.set(ch.principal, group);
      }
      group.subs.push(...subs);
      group.channels.push(ch);
    }
    if (!byPrincipal.size) return;
    const columns = changeColumns(rel);
    const keys = { organization_id: change.org, id: change.id };
    await Promise.all(
      [...byPrincipal].map(async ([principal, group]) => {
        const { row, reached } = await readFor(deps.db, principal, rel, change, group.subs);
        if (!reached.length) return;
        const data = {
          schema: 'public',
          table: change.table,
          commit_timestamp: change.at,
          type: change.op,
          columns,
          record: row ?? {},
          old_record: change.op === 'INSERT' ? {} : keys,
          errors: null,
        };
        for (const ch of group.channels) {
          const ids = reached.filter((s) => ch.subs.includes(s)).map((s) => s.id);
          if (ids.length)
            ch.send({
              joinRef: ch.joinRef,
              ref: null,
              topic: ch.topic,
              event: 'postgres_changes',
              payload: { ids, data },
            });
        }
      }),
    );
  }

  /** Checks again whether the principals of the channels `which` picks may read; closes those refused. */
  async function recheck(which: (ch: Joined) => boolean) {
    const groups = new Map<Principal, Joined[]>();
    for (const set of byOrg.values())
      for (const ch of set)
        if (which(ch)) groups.set(ch.principal, [...(groups.get(ch.principal) ?? []), ch]);
    await Promise.all(
      [...groups].map(async ([principal, channels]) => {
        const org = channels[0]?.org as string;
        const may = await mayRead(deps.db, principal, org).catch(() => true); // a failed check closes nothing
        if (!may) for (const ch of channels) ch.close('Access to this organization was revoked');
      }),
    );
  }

  function onChange(notice: Record<string, unknown>) {
    const change = parseChange(notice);
    if (!change) return;
    queue = queue
      .then(() => deliver(change))
      .catch((err) =>
        deps.log.warn({ err: { message: (err as Error).message } }, 'realtime change not delivered'),
      );
  }

  /** A membership ended or changed: that person's channels there are checked. */
  function onAccess(notice: Record<string, unknown>) {
    void recheck(
      (ch) => ch.org === notice.org && ch.principal.kind === 'user' && ch.principal.userId === notice.user,
    );
  }

  function onBroadcast(n: BroadcastNotice) {
    for (const ch of byOrg.get(n.org) ?? []) {
      if (ch.topic !== n.topic || (ch.socketId === n.from && !ch.broadcastSelf)) continue;
      const body = { type: 'broadcast', event: n.event, payload: n.payload };
      ch.send({ joinRef: null, ref: null, topic: ch.topic, event: 'broadcast', payload: body });
    }
  }

  return {
    /** Resolves once the channel will hear what is committed from then on; rejects when it cannot. */
    async add(ch: Joined) {
      if (!ch.org) return;
      const set = byOrg.get(ch.org) ?? new Set();
      byOrg.set(ch.org, set);
      set.add(ch);
      await Promise.all([hear(), interest.want(ch.org)]);
    },
    remove(ch: Joined) {
      if (!ch.org) return;
      const set = byOrg.get(ch.org);
      set?.delete(ch);
      if (set?.size === 0) byOrg.delete(ch.org);
      if (byOrg.size > 0 || !listening) return;
      clearTimeout(linger);
      linger = setTimeout(() => byOrg.size === 0 && stopHearing(), deps.lingerMs);
      linger.unref();
    },
    async close() {
      clearTimeout(linger);
      await Promise.all([stopHearing(), interest.close()]);
    },
    /** Channels joined in `org` in this process (the per-organization limit). */
    count: (org: string) => byOrg.get(org)?.size ?? 0,
    /** An agent key revoked (svc_agent_key_revoked, its id): that agent's channels are checked. */
    onKeyRevoked(payload?: string) {
      void recheck((ch) =>
        payload === undefined ? true : ch.principal.kind === 'agent' && ch.principal.keyId === payload,
      );
    },
    recheckAll: () => recheck(() => true),
    /** Sends a client's broadcast to every process (this one included) through NOTIFY. */
    async publish(from: Joined & { org: string }, event: string, payload: unknown) {
      const notice: BroadcastNotice = {
        org: from.org,
        topic: from.topic,
        event,
        payload,
        from: from.socketId,
      };
      await deps.db.query('select pg_notify($1, $2)', [
        REALTIME_CHANNEL,
        JSON.stringify({ kind: 'broadcast', ...notice }),
      ]);
    },
  };
}

export type Hub = ReturnType<typeof createHub>;
