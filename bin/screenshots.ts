// The README's screenshots, made again from the built dashboard: a service on a fresh embedded
// database (in this process, fake Graph API beside it), seeded over its public API with a demo
// bakery (inventory, an order moved along, WhatsApp conversations, a week of posts with
// pictures), photographed in Debian's Chromium at desktop width (1280×800) and at 390 px.
//
//   npm run build:web && npm run screenshots      (writes docs/screenshots/*.png)
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TZDate } from '@date-fns/tz';
import { addDays, startOfWeek } from 'date-fns';
import type { Page } from 'playwright-core';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/main.ts';
import { startFakeGraph } from '../test/fakes/graph/index.ts';
import { encodePng } from '../test/fakes/media/png.ts';
import { launchBrowser } from '../test/helpers/chromium.ts';
import { APP_SECRET, deliver, fixture, VERIFY_TOKEN } from '../test/webhooks/meta.ts';

const OUT = new URL('../docs/screenshots/', import.meta.url).pathname;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const ZONE = 'UTC';
const EMAIL = 'owner@maple-and-rye.example';
const PHONE_ID = '105550001';
const PAGE_ID = '105550002';
const IG_ID = '178550003';
const TOKEN = 'EAAG-demo-token';

/** A width×height PNG: a diagonal blend of two colours (a stand-in for a product photo). */
const photo = (width: number, height: number, from: number[], to: number[]) =>
  encodePng(width, height, (x, y) => {
    const t = (x + y) / (width + height);
    return from.map((f, c) => Math.round(f * (1 - t) + (to[c] ?? 0) * t));
  });

const PHOTOS: Record<string, Buffer> = {
  'loaf.png': photo(160, 160, [214, 160, 96], [120, 70, 30]),
  'berries.png': photo(160, 160, [190, 40, 80], [60, 20, 90]),
  'matcha.png': photo(160, 160, [150, 200, 110], [40, 110, 60]),
  'lemon.png': photo(160, 160, [250, 225, 90], [230, 150, 40]),
};
const media = createServer((req, res) => {
  const file = PHOTOS[(req.url ?? '').slice(1)];
  if (!file) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'image/png' }).end(file);
});
await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
const mediaUrl = (name: string) => `http://127.0.0.1:${(media.address() as AddressInfo).port}/${name}`;

const graph = await startFakeGraph({
  accounts: {
    [PHONE_ID]: { token: TOKEN, channel: 'whatsapp' },
    [PAGE_ID]: { token: TOKEN, channel: 'messenger' },
    [IG_ID]: { token: TOKEN, channel: 'instagram' },
  },
});
const dir = mkdtempSync(path.join(tmpdir(), 'svc-screenshots-'));
const svc = await startService(
  loadConfig({
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATA_DIR: dir,
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    META_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
    MEDIA_FETCH_ALLOW_HOSTS: '127.0.0.1',
    WORKER_POLL_MS: '500',
    RATE_LIMIT_STANDARD_PER_MINUTE: '5000',
  }),
);

/** One call to the service's API; its JSON, or a thrown error saying what was refused. */
async function api(method: string, route: string, body?: unknown, token?: string, headers = {}) {
  const res = await fetch(`${svc.url}${route}`, {
    method,
    headers: {
      apikey: svc.services.keys.anonKey,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const waitFor = async <T>(read: () => Promise<T | undefined | null>, what: string): Promise<T> => {
  for (let i = 0; i < 200; i++) {
    const v = await read();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
};

// --- The demo bakery, over the public API -----------------------------------------------------
const owner = await api('POST', '/auth/v1/signup', {
  email: EMAIL,
  password: 'password-8',
  data: { organization_name: 'Maple & Rye Bakery' },
});
const token = owner.access_token as string;
const org = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).app_metadata
  .organization_id as string;
await api(
  'POST',
  '/functions/v1/organization-plan',
  { organization_id: org, plan: 'starter' },
  svc.services.keys.serviceRoleKey,
);
// The plan change reaches the token at its next refresh.
const session = await api('POST', '/auth/v1/token?grant_type=refresh_token', {
  refresh_token: owner.refresh_token,
});
const as = session.access_token as string;
for (const [provider, id] of [
  ['whatsapp', PHONE_ID],
  ['facebook', PAGE_ID],
  ['instagram', IG_ID],
] as const)
  await api(
    'POST',
    '/functions/v1/connected-accounts',
    { provider, external_id: id, access_token: TOKEN },
    as,
  );

const items = await api(
  'POST',
  '/rest/v1/inventory_items',
  [
    { name: 'Sourdough loaf', sku: 'BRD-SOUR', unit_price: 7.5, quantity_on_hand: 40 },
    { name: 'Cinnamon knot', sku: 'PAS-CINN', unit_price: 3.25, quantity_on_hand: 120 },
    { name: 'Rye crackers (box)', sku: 'CRK-RYE', unit_price: 5.9, quantity_on_hand: 25 },
  ],
  as,
  { prefer: 'return=representation' },
);
const made = await api(
  'POST',
  '/functions/v1/orders',
  {
    customer_name: 'Maya Lopez',
    customer_email: 'maya@example.com',
    address: '14 Orchard Lane, Portland OR 97205',
    phone_number: '+15035550134',
    items: [
      { item_id: items[0].id, name: 'Sourdough loaf', quantity: 2, unit_price: 7.5 },
      { item_id: items[1].id, name: 'Cinnamon knot', quantity: 6, unit_price: 3.25 },
      { item_id: items[2].id, name: 'Rye crackers (box)', quantity: 1, unit_price: 5.9 },
    ],
  },
  as,
);
const orderId = made.order.id as string;
for (const status of ['confirmed', 'processing'])
  await api('PATCH', `/rest/v1/orders?id=eq.${orderId}`, { status }, as);

// Customers write on WhatsApp (signed webhooks, as Meta sends them); one is answered.
let seq = 0;
const writes = async (name: string, waId: string, text: string) => {
  const body = fixture('wa-text', {
    PHONE_NUMBER_ID: PHONE_ID,
    WA_ID: waId,
    TEXT_ID: `DEMO${++seq}`,
    '1750090702': String(Math.floor(Date.now() / 1000)),
    'Sheena Nelson': name,
    'Does it come in another color?': text,
  });
  const res = await deliver({ url: svc.url } as Parameters<typeof deliver>[0], body);
  if (res.status !== 200) throw new Error(`webhook: ${res.status}`);
};
const conversationOf = (waId: string) =>
  waitFor(async () => {
    const rows = await api(
      'GET',
      `/rest/v1/conversations?select=id,contacts!inner(whatsapp_id)&contacts.whatsapp_id=eq.${waId}`,
      undefined,
      as,
    );
    return rows[0]?.id as string | undefined;
  }, `the conversation with ${waId}`);
await writes('Tom Becker', '15035550111', 'Do you have gluten-free bread on Saturdays?');
await writes('Priya Raman', '15035550122', 'Can I pick up my order at 5 instead of 4?');
await writes('Maya Lopez', '15035550134', 'Hi! Is my order on its way?');
const maya = await conversationOf('15035550134');
await api(
  'POST',
  '/functions/v1/whatsapp-send-message',
  { conversation_id: maya, text: 'Hi Maya, it left the bakery this morning and arrives by noon.' },
  as,
);
await new Promise((r) => setTimeout(r, 1500));
await writes('Maya Lopez', '15035550134', 'Perfect, thank you!');
await writes('Priya Raman', '15035550122', 'Also, could you add two cinnamon knots?');

// A week of posts ahead (next week, so every post can still move), most with a picture.
const today = TZDate.tz(ZONE);
const monday = startOfWeek(addDays(today, 7), { weekStartsOn: 1 });
const at = (day: number, hh: number, mm = 0) => {
  const d = addDays(monday, day);
  return new TZDate(d.getFullYear(), d.getMonth(), d.getDate(), hh, mm, ZONE).toISOString();
};
const posts: [string, string, string, string | null][] = [
  ['facebook', at(0, 9), 'Fresh sourdough every morning from 7. Come early!', 'loaf.png'],
  ['instagram', at(1, 12, 30), 'Berry tarts are back for the summer', 'berries.png'],
  ['facebook', at(2, 18), 'Thursday: the bakery closes at 4 for a private event.', null],
  ['instagram', at(3, 8, 15), 'New: matcha cinnamon knots', 'matcha.png'],
  ['facebook', at(4, 10), 'Lemon drizzle weekend: 2 for 1 on slices', 'lemon.png'],
  ['instagram', at(5, 11), 'Behind the scenes: shaping 200 loaves before sunrise', 'loaf.png'],
];
const accounts = await api('GET', '/functions/v1/connected-accounts?per_page=100', undefined, as);
const accountOf = (p: string) => accounts.data.find((a: { provider: string }) => a.provider === p)?.id;
for (const [platform, when, message, picture] of posts)
  await api(
    'POST',
    '/functions/v1/social-posts',
    {
      platform,
      account_id: accountOf(platform),
      message,
      scheduled_at: when,
      ...(picture ? { media_urls: [mediaUrl(picture)] } : {}),
    },
    as,
  );

// --- The photographs ---------------------------------------------------------------------------
const browser = await launchBrowser();
mkdirSync(OUT, { recursive: true });
const shots: { name: string; route: string; ready: (p: Page) => Promise<unknown> }[] = [
  {
    name: 'inbox',
    route: `/app/inbox/${maya}`,
    ready: (p) => p.getByRole('heading', { name: 'Maya Lopez' }).first().waitFor(),
  },
  {
    name: 'order',
    route: `/app/orders/${orderId}`,
    ready: (p) => p.getByRole('region', { name: 'Next steps' }).waitFor(),
  },
  {
    name: 'calendar',
    route: `/app/social?view=week&day=${at(1, 12).slice(0, 10)}`,
    ready: (p) =>
      p.waitForFunction(() => {
        const imgs = Array.from(document.querySelectorAll<HTMLImageElement>('.chip-thumb'));
        return imgs.length >= 5 && imgs.every((i) => i.complete && i.naturalWidth > 0);
      }),
  },
];
for (const [suffix, viewport] of [
  ['', DESKTOP],
  ['-phone', PHONE],
] as const) {
  const context = await browser.newContext({ viewport, timezoneId: ZONE, locale: 'en-US' });
  const page = await context.newPage();
  await page.goto(`${svc.url}/app/sign-in`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill('password-8');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('combobox', { name: 'Organization' }).waitFor();
  for (const shot of shots) {
    // At phone width the inbox is its list (the conversation is one tap away).
    const route = shot.name === 'inbox' && viewport === PHONE ? '/app/inbox' : shot.route;
    await page.goto(`${svc.url}${route}`);
    await (shot.name === 'inbox' && viewport === PHONE
      ? page.getByRole('link', { name: 'Maya Lopez' }).waitFor()
      : shot.ready(page));
    await page.waitForTimeout(400);
    const file = path.join(OUT, `${shot.name}${suffix}.png`);
    await page.screenshot({ path: file });
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
  await context.close();
}

await browser.close();
await svc.close();
await graph.close();
media.close();
rmSync(dir, { recursive: true, force: true });
