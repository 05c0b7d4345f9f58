// What this file protects (issue 26, section 1): PostgreSQL restarted three times and every one of
// its connections terminated twice, under load, while an API process (`svc start`, WORKER=off)
// and a worker (`svc worker`) take sends, Meta webhook deliveries and contact writes. Both
// processes are still serving when the database is back, with no supervisor to restart them;
// nothing they acknowledged is lost (every send accepted reaches Meta and is recorded sent, every
// delivery answered 200 becomes exactly one message, every contact answered 201 exists); while
// the database was away, failures were 503, never 500. Before the fix, a connection dropped
// between two statements of a transaction ended its process (an unhandled 'error' event), and
// every request after that was refused.
// PostgreSQL only: a server of the test's own (pg-cluster.ts), restarted with pg_ctl.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { metaSignature } from '../../src/channels/meta-signature.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { runCli, spawnUntil } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/db.ts';
import { type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { type Cluster, startCluster } from '../helpers/pg-cluster.ts';
import { connect, eventually } from '../helpers/send.ts';
import type { TestService } from '../helpers/service.ts';
import { APP_SECRET, fixture } from '../webhooks/meta.ts';

const PHONE_ID = '106540352242922';
const WA_TOKEN = 'EAAG-restart-drill';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the load saw: each answer's status (0: no answer at all), and what was acknowledged. */
type Tally = { statuses: number[]; sends: string[]; deliveries: string[]; contacts: string[] };

/** A request; its status and JSON, or status 0 when the process did not answer at all. */
async function send(url: string, init: RequestInit) {
  try {
    const res = await fetch(url, init);
    const text = await res.text();
    return { status: res.status, json: /^[[{]/.test(text) ? JSON.parse(text) : null };
  } catch {
    return { status: 0, json: null };
  }
}

/** `loops` loops of `step` until `running()` is false. */
const load = (loops: number, running: () => boolean, step: (n: string) => Promise<void>) =>
  Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      for (let i = 0; running(); i++) {
        await step(`${loop}-${i}`);
        await pause(20);
      }
    }),
  );

it.runIf(onPostgres())(
  'three restarts and two terminations of every connection, under load: every process serves again and loses nothing it acknowledged',
  async () => {
    const cluster: Cluster = await startCluster();
    cleanups.push(() => cluster.destroy());
    const graph: FakeGraph = await startFakeGraph({
      accounts: { [PHONE_ID]: { token: WA_TOKEN, channel: 'whatsapp' } },
    });
    cleanups.push(() => graph.close());
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-drill-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const env = {
      DATABASE_URL: cluster.url,
      DATA_DIR: dir,
      PORT: '0',
      LOG_LEVEL: 'warn',
      META_GRAPH_URL: graph.url,
      META_APP_SECRET: APP_SECRET,
      WHATSAPP_VERIFY_TOKEN: 'verify',
      WORKER_POLL_MS: '500',
      WORKER_SUPERVISE_SECONDS: '1',
      SEND_FIRST_RETRY_SECONDS: '2',
      META_GRAPH_TIMEOUT_MS: '1500',
      SEND_RETRY_BACKOFF_SECONDS: '1',
      WEBHOOK_RETRY_BACKOFF_SECONDS: '1',
      // A job a worker took whose answer a restart cut off comes back once its lease runs out.
      WEBHOOK_LEASE_SECONDS: '5',
      // The load is one caller's: the per-minute limits are not what this test is about.
      RATE_LIMIT_STANDARD_PER_MINUTE: '100000',
      RATE_LIMIT_WEBHOOK_PER_MINUTE: '100000',
    };
    const started = (child: ChildProcess) => cleanups.push(() => child.kill('SIGKILL'));
    const api = await spawnUntil(['start'], { ...env, WORKER: 'off' }, /svc listening on (\S+)\n/, {
      cli: true,
    });
    started(api.child);
    const url = /svc listening on (\S+)\n/.exec(api.output())?.[1] as string;
    const worker = await spawnUntil(['worker'], env, /svc worker running/, { cli: true });
    started(worker.child);
    const keys = JSON.parse((await runCli(['keys'], { ...env, PUBLIC_URL: url })).stdout);
    const target = { url, anonKey: keys.anon_key, serviceRoleKey: keys.service_role_key } as TestService;
    const owner: Session = await signUp(target, 'Restart Drill Co');
    await setPlan(target, owner, 'growth');
    await connect(target, owner, 'whatsapp', PHONE_ID, WA_TOKEN);

    const tally: Tally = { statuses: [], sends: [], deliveries: [], contacts: [] };
    const asOwner = { apikey: keys.anon_key, authorization: `Bearer ${owner.access_token}` };
    const json = { 'content-type': 'application/json' };
    let running = true;
    const flowing = Promise.all([
      load(
        4,
        () => running,
        async (n) => {
          const to = `+1415${String(Number(n.replace('-', '')) % 10_000_000).padStart(7, '0')}`;
          const r = await send(`${url}/functions/v1/whatsapp-send-message`, {
            method: 'POST',
            headers: { ...asOwner, ...json },
            body: JSON.stringify({ to, template: { name: 'order_update', language: 'en_US' } }),
          });
          tally.statuses.push(r.status);
          if (r.status === 201 || r.status === 202) tally.sends.push(r.json.message.id);
        },
      ),
      load(
        2,
        () => running,
        async (n) => {
          const wamid = `wamid.DRILL_${n}`;
          const body = fixture('wa-text', {
            PHONE_NUMBER_ID: PHONE_ID,
            'wamid.TEXT_ID': wamid,
            WA_ID: `1631555${n.replace('-', '')}`,
          });
          const r = await send(`${url}/functions/v1/whatsapp-webhook`, {
            method: 'POST',
            headers: { ...json, 'x-hub-signature-256': metaSignature(body, APP_SECRET) },
            body,
          });
          tally.statuses.push(r.status);
          if (r.status === 200) tally.deliveries.push(wamid);
        },
      ),
      load(
        2,
        () => running,
        async (n) => {
          const r = await send(`${url}/rest/v1/contacts`, {
            method: 'POST',
            headers: { ...asOwner, ...json, prefer: 'return=representation' },
            body: JSON.stringify({ first_name: `Drill ${n}` }),
          });
          tally.statuses.push(r.status);
          if (r.status === 201) tally.contacts.push(r.json[0].id);
          tally.statuses.push(
            (await send(`${url}/rest/v1/contacts?select=id&limit=5`, { headers: asOwner })).status,
          );
        },
      ),
    ]);

    const firstStart = await cluster.startedAt();
    for (const fault of ['restart', 'terminate', 'restart', 'terminate', 'restart'] as const) {
      await pause(1500);
      if (fault === 'restart') cluster.restart();
      else expect(await cluster.terminateAll()).toBeGreaterThan(0);
    }
    await pause(1500);
    running = false;
    await flowing;

    // Both processes live and serve; the server really restarted.
    expect(api.child.exitCode ?? api.child.signalCode).toBeNull();
    expect(worker.child.exitCode ?? worker.child.signalCode).toBeNull();
    expect(await cluster.startedAt()).not.toBe(firstStart);
    await eventually(async () => (await send(`${url}/health`, {})).status === 200, 30_000);
    // Every answer was a real one: a success, or 503 while the database was away. Never a 500,
    // never a connection refused or reset.
    const seen = new Map<number, number>();
    for (const s of tally.statuses) seen.set(s, (seen.get(s) ?? 0) + 1);
    const summary = JSON.stringify(Object.fromEntries(seen)); // status (0: no answer) → how many
    expect(
      [...seen.keys()].some((s) => s >= 200 && s < 300),
      summary,
    ).toBe(true);
    expect(
      [...seen.keys()].filter((s) => s < 200 || (s >= 300 && s !== 503)),
      summary,
    ).toEqual([]);

    const db = openPostgres(cluster.url, 2);
    cleanups.push(() => db.close());
    // Every send accepted was sent and recorded so: the worker retries those a restart cut off,
    // once the claim of the attempt that was cut runs out (the Graph deadline + 30 s).
    expect(tally.sends.length).toBeGreaterThan(0);
    await eventually(async () => {
      const [row] = await db.query<{ n: number }>(
        "select count(*)::int as n from messages where id = any($1) and status = 'sent'",
        [tally.sends],
      );
      return row?.n === tally.sends.length;
    }, 150_000);
    // …with the id Meta gave it for that very send.
    const given = new Set(
      graph.sent().map((r) => (r.response?.body as { messages?: { id: string }[] })?.messages?.[0]?.id),
    );
    const recorded = await db.query<{ provider_message_id: string }>(
      'select provider_message_id from messages where id = any($1)',
      [tally.sends],
    );
    for (const m of recorded) expect(given.has(m.provider_message_id)).toBe(true);
    // Every delivery answered 200 became exactly one inbound message.
    expect(tally.deliveries.length).toBeGreaterThan(0);
    await eventually(async () => {
      const rows = await db.query<{ n: number }>(
        'select count(*)::int as n from messages where provider_message_id = any($1) group by provider_message_id',
        [tally.deliveries],
      );
      return rows.length === tally.deliveries.length && rows.every((r) => r.n === 1);
    });
    // Every contact answered 201 exists.
    const [contacts] = await db.query<{ n: number }>(
      'select count(*)::int as n from contacts where id = any($1)',
      [tally.contacts],
    );
    expect(contacts?.n).toBe(tally.contacts.length);
  },
  300_000,
);
