// The service as bench/messages.ts measures its sends, in a process of its own: the real
// composition root (startService, the worker inline as `npm start` runs it) on DATABASE_URL,
// logging at info to stdout like a deployment, the Graph API at META_GRAPH_URL (the bench's fake).
// It signs up an owner on the scale plan (no daily quota, no monthly message ceiling) with a
// connected WhatsApp number, sends one message so the recipient's contact and conversation exist,
// and tells its parent over IPC what the bare baseline (bench/messages-baseline.ts) needs to do
// the same durable work: the owner's token and the public key that verifies it, the ids, and the
// job insert pg-boss makes for a send (recorded from one enqueue). Serves until SIGTERM.
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/main.ts';
import type { Queryable, Row } from '../src/platform/db/database.ts';
import { connectAccount, signUpOwner } from './bench-service.ts';
import { GRAPH_TOKEN, PHONE_ID, RECIPIENT, type SendsInfo } from './messages-fixture.ts';

const env = process.env;
const config = loadConfig({
  PORT: '0',
  LOG_LEVEL: 'info',
  DATABASE_URL: env.DATABASE_URL,
  DATABASE_POOL_SIZE: '16',
  META_GRAPH_URL: env.META_GRAPH_URL,
  META_INSTAGRAM_GRAPH_URL: env.META_GRAPH_URL,
  RATE_LIMIT_STANDARD_PER_MINUTE: '100000000',
  WORKER: env.WORKER,
});
const svc = await startService(config);
const s = svc.services;
const { accessToken, org } = await signUpOwner(svc, 'Bench');
await s.db.query("update organizations set plan = 'scale' where id = $1", [org]);
await s.db.query("update plans set api_calls_per_day = null, outbound_messages = null where slug = 'scale'");
s.plans.forget(org);
const owner = {
  apikey: s.keys.anonKey,
  authorization: `Bearer ${accessToken}`,
  'content-type': 'application/json',
};
await connectAccount(svc, accessToken, {
  provider: 'whatsapp',
  external_id: PHONE_ID,
  access_token: GRAPH_TOKEN,
});
const first = await fetch(`${svc.url}/functions/v1/whatsapp-send-message`, {
  method: 'POST',
  headers: owner,
  body: JSON.stringify({ to: RECIPIENT, template: { name: 'welcome', language: 'en' } }),
});
if (first.status !== 201) throw new Error(`first send: ${first.status} ${await first.text()}`);
const { message } = (await first.json()) as { message: { conversation_id: string; account_id: string } };

// One enqueue with its statements recorded, rolled back: the insert the baseline repeats.
const recorded: { text: string; values: unknown[] }[] = [];
await s.db
  .transaction(async (tx) => {
    const recording: Queryable = {
      query: <T extends Row>(text: string, values?: unknown[]) => {
        recorded.push({ text, values: values ?? [] });
        return tx.query<T>(text, values);
      },
    };
    await s.queue.enqueue(
      recording,
      'send-message',
      { organization_id: org, message_id: org },
      {
        startAfter: config.sendRetry.firstRetrySeconds,
        key: `${org}/recorded`,
      },
    );
    throw new Error('rollback');
  })
  .catch(() => {});
const insert = recorded.find((r) => /insert into/i.test(r.text));
if (!insert) throw new Error('no job insert recorded');
const [record] = JSON.parse(insert.values[0] as string) as Record<string, unknown>[];

const info: SendsInfo = {
  url: svc.url,
  anonKey: s.keys.anonKey,
  accessToken,
  jwks: s.tokens.jwks(),
  org,
  accountId: message.account_id,
  conversationId: message.conversation_id,
  jobInsert: { text: insert.text, record: record as Record<string, unknown> },
};
process.send?.(info);
process.once('SIGTERM', async () => {
  await svc.close();
  process.exit(0);
});
