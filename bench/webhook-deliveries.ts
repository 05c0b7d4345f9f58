// Signed WhatsApp deliveries as Meta sends them, for bench/webhooks.ts: test/fixtures/meta's text
// message with its own message id each (so none is deduplicated), from one of SENDERS customers,
// compacted to one line and signed with the bench's app secret (X-Hub-Signature-256).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { metaSignature } from '../src/channels/meta-signature.ts';

export const APP_SECRET = 'bench-meta-app-secret';
export const VERIFY_TOKEN = 'bench-verify-token';
export const PHONE_ID = '106540352242922';
/** Customers writing in: contacts and conversations stay few, as in a shop's day. */
const SENDERS = 100;

const FIXTURE = readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'meta', 'wa-text.json'),
  'utf8',
);

export type Delivery = { wamid: string; body: string; signature: string };

/** The n-th delivery of a batch named `tag`. */
export function delivery(tag: string, n: number): Delivery {
  const wamid = `wamid.bench-${tag}-${n}`;
  const text = FIXTURE.replaceAll('PHONE_NUMBER_ID', PHONE_ID)
    .replaceAll('WA_ID', String(16315550000 + (n % SENDERS)))
    .replace('wamid.TEXT_ID', wamid)
    .replace('1750090702', String(Math.floor(Date.now() / 1000)));
  const body = JSON.stringify(JSON.parse(text));
  return { wamid, body, signature: metaSignature(body, APP_SECRET) };
}

/** Writes `count` deliveries to `file` for bench/deliveries.lua: `signature<TAB>body` a line. */
export function writeDeliveries(file: string, tag: string, count: number): string {
  const lines: string[] = [];
  for (let n = 0; n < count; n++) {
    const d = delivery(tag, n);
    lines.push(`${d.signature}\t${d.body}`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}
