import { readFileSync } from 'node:fs';
import path from 'node:path';
import { metaSignature } from '../../src/channels/meta-signature.ts';
import type { ProcessWebhookJob } from '../../src/domain/webhook-events.ts';
import { processWebhookEvent } from '../../src/jobs/process-webhook-event.ts';
import { inboxRouter } from '../../src/jobs/route-webhook-inbox.ts';
import type { TestService } from '../helpers/service.ts';

// Meta's side of the webhook tests: fixtures written from Meta's documented examples, with their
// placeholders (PHONE_NUMBER_ID, WA_ID, PAGE_ID, PSID, …) replaced as text, signed exactly as
// Meta signs (HMAC-SHA256 of the bytes sent), and posted over real HTTP.

export const APP_SECRET = 'meta-app-secret-for-tests';
export const VERIFY_TOKEN = 'verify-token-for-tests';
export const META_ENV = { META_APP_SECRET: APP_SECRET, WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN, WORKER: 'off' };

const DIR = path.join(import.meta.dirname, '..', 'fixtures', 'meta');

/** A fixture's text with each placeholder replaced (every occurrence, longest first). */
export function fixture(name: string, values: Record<string, string> = {}): string {
  let text = readFileSync(path.join(DIR, `${name}.json`), 'utf8');
  for (const key of Object.keys(values).sort((a, b) => b.length - a.length))
    text = text.split(key).join(values[key] as string);
  return text;
}

/** Posts `body` (bytes as given) signed with the app secret unless `signature` says otherwise. */
export async function deliver(
  svc: TestService,
  body: string,
  opts: { signature?: string | null; path?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  const signature = opts.signature === undefined ? metaSignature(body, APP_SECRET) : opts.signature;
  if (signature !== null) headers['x-hub-signature-256'] = signature;
  const res = await fetch(`${svc.url}/functions/v1/${opts.path ?? 'whatsapp-webhook'}`, {
    method: 'POST',
    headers,
    body,
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON came back
  const json: any = text ? JSON.parse(text) : null;
  return { status: res.status, headers: res.headers, json, text };
}

/**
 * What the worker's router does with the deliveries acknowledged so far: routes the whole inbox,
 * batch after batch, in this process (the tests run with WORKER=off, so nothing else routes).
 * Events appear after the 200, not with it: a test that reads them calls this first.
 */
export async function routeInbox(svc: TestService) {
  const route = inboxRouter(svc.services);
  while ((await route()).taken > 0);
}

/** The router, then one run of the worker's job over every pending event (WORKER=off). */
export async function processPending(svc: TestService) {
  await routeInbox(svc);
  const events = await svc.services.db.query<{ organization_id: string; id: string }>(
    "select organization_id, id from app.webhook_events where status = 'pending' order by received_at, id",
  );
  const outcomes = [];
  for (const e of events) {
    const job: ProcessWebhookJob = { organization_id: e.organization_id, event_id: e.id };
    outcomes.push(await processWebhookEvent(svc.services, job));
  }
  return outcomes;
}

export const countOf = async (svc: TestService, sql: string, params: unknown[] = []) =>
  (await svc.services.db.query<{ n: number }>(`select count(*)::int as n from ${sql}`, params))[0]?.n ?? 0;

/**
 * With a worker running (inline or `svc worker`): resolves once its router has taken every
 * delivery acknowledged so far (the inbox is empty and nothing holds a row of it), polling the
 * table; gives up after `ms`.
 */
export async function routed(svc: TestService, ms = 15_000) {
  const end = Date.now() + ms;
  while ((await countOf(svc, 'app.webhook_inbox')) > 0) {
    if (Date.now() > end) throw new Error('the inbox router did not take the deliveries');
    await new Promise((r) => setTimeout(r, 20));
  }
}
