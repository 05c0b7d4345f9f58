// A local stand-in for Shopify, for development (`svc dev fake-shopify`) and tests. A real HTTP
// server that serves every shop under a path prefix (http://127.0.0.1:PORT/{shop}/…, so the
// service reaches it through SHOPIFY_SHOP_URL=http://127.0.0.1:PORT/{shop} and a browser can too)
// and speaks what the service uses, in Shopify's formats: the OAuth install (the authorize page
// with Install and Cancel, the redirect signed with the app's secret, the single-use code's
// exchange for an offline token), the shop endpoint, webhook registration, uninstalling (the
// app's tokens revoked), and order webhooks delivered signed as Shopify signs them. It records
// every request. The service never imports this file.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorizePage, cancelledPage, errorPage } from './pages.ts';

/** A shop: its owner (who approves installs), its name, and custom apps' tokens made in its admin. */
export type FakeShop = {
  owner: string;
  name?: string;
  /** Admin API access tokens of custom apps made in this shop's admin, each with its app's secret. */
  customApps?: { token: string; secret: string }[];
};

/** The app the service installs as (SHOPIFY_API_KEY / SHOPIFY_API_SECRET). */
export type FakeApp = { apiKey: string; apiSecret: string };

export type FakeShopifyOptions = {
  port?: number;
  host?: string;
  app?: FakeApp;
  shops?: Record<string, FakeShop>;
  onRequest?: (r: RecordedShopifyRequest) => void;
  /**
   * Every *.myshopify.com shop exists, and any token a shop has not seen acts for it (a custom
   * app's, its secret unknown): for tests that connect shops but are about something else.
   */
  open?: boolean;
};

export type RecordedShopifyRequest = {
  method: string;
  shop: string | null;
  /** Within the shop: /admin/api/2026-10/shop.json */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  status: number;
};

export type FakeWebhook = {
  id: number;
  shop: string;
  topic: string;
  address: string;
  format: 'json';
  api_version: string;
  created_at: string;
  /** Who signs its deliveries: the OAuth app's secret, or the custom app's. */
  secret: string;
};

export type Delivery = { status: number; text: string; headers: Record<string, string> };

export type FakeShopify = {
  url: string;
  /** SHOPIFY_SHOP_URL for the service: http://host:port/{shop} */
  shopUrl: string;
  readonly requests: RecordedShopifyRequest[];
  setShop(domain: string, shop: FakeShop): void;
  /** The shop's webhooks, oldest first. */
  webhooks(shop: string): FakeWebhook[];
  /** The offline tokens installs minted for `shop` (tests that play the merchant). */
  installedTokens(shop: string): string[];
  /** The merchant uninstalls the app: its tokens stop working and its webhooks are gone. */
  uninstall(shop: string): void;
  /** The next `n` requests to a shop's Admin API get this status (5xx outages). */
  failNext(n: number, status: number): void;
  /**
   * Posts an order webhook for `topic` to every address registered for it on `shop`, with the
   * headers Shopify sends, signed with the secret of the app that registered it.
   */
  deliver(shop: string, topic: string, order: string, opts?: { webhookId?: string }): Promise<Delivery[]>;
  close(): Promise<void>;
};

const API = /^\/admin\/api\/(\d{4}-\d{2}|unstable)\/(shop|webhooks)\.json$/;
const INVALID_TOKEN = '[API] Invalid API key or access token (unrecognized login or wrong password)';
const CODE_TTL_MS = 10 * 60_000;

export async function startFakeShopify(options: FakeShopifyOptions = {}): Promise<FakeShopify> {
  const app = options.app ?? { apiKey: 'fake-shopify-api-key', apiSecret: 'fake-shopify-api-secret' };
  const shops = new Map(Object.entries(options.shops ?? {}));
  const requests: RecordedShopifyRequest[] = [];
  // token → the shop it acts for and the secret of the app it belongs to.
  const tokens = new Map<string, { shop: string; secret: string; oauth: boolean }>();
  const codes = new Map<string, { shop: string; expires: number }>();
  const hooks: FakeWebhook[] = [];
  let nextHookId = 1_047_000_000;
  let failures: number[] = [];

  const customTokens = (domain: string, shop: FakeShop) => {
    for (const c of shop.customApps ?? [])
      tokens.set(c.token, { shop: domain, secret: c.secret, oauth: false });
  };
  for (const [domain, shop] of shops) customTokens(domain, shop);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const [, first = '', ...rest] = url.pathname.split('/');
    const shopDomain = decodeURIComponent(first).toLowerCase();
    const path = `/${rest.join('/')}`;
    const record: RecordedShopifyRequest = {
      method: req.method ?? 'GET',
      shop: shopDomain || null,
      path,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
      ),
      body: parseBody(raw, req.headers['content-type']),
      status: 0,
    };
    requests.push(record);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, {
        'content-type':
          typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
        ...headers,
      });
      res.end(text);
      options.onRequest?.(record);
    };
    // A browser on the install page asks for the site's icon: none, and no error in its console.
    if (url.pathname === '/favicon.ico') return answer(204, '');
    if (options.open && /\.myshopify\.com$/.test(shopDomain) && !shops.has(shopDomain))
      shops.set(shopDomain, { owner: `owner@${shopDomain}` });
    const shop = shops.get(shopDomain);
    // Shopify answers an unknown shop's every address with its "store unavailable" page.
    if (!shop) return answer(404, errorPage('There’s no store with this address.'));

    if (path === '/admin/oauth/authorize' && req.method === 'GET') {
      const q = record.query;
      if (q.client_id !== app.apiKey)
        return answer(400, errorPage('Oauth error invalid_request: The client_id is not valid.'));
      if (!/^https?:\/\//.test(q.redirect_uri ?? ''))
        return answer(
          400,
          errorPage('Oauth error invalid_request: The redirect_uri is missing or not whitelisted.'),
        );
      return answer(200, authorizePage(shopDomain, shop, q));
    }
    // The authorize page's buttons (Shopify's own admin endpoints, not part of its public API).
    if (path === '/admin/oauth/authorize/approve' && req.method === 'POST') {
      const q = record.body as Record<string, string>;
      if (q.client_id !== app.apiKey || !/^https?:\/\//.test(q.redirect_uri ?? ''))
        return answer(400, errorPage('Oauth error invalid_request'));
      const code = randomBytes(16).toString('hex');
      codes.set(code, { shop: shopDomain, expires: Date.now() + CODE_TTL_MS });
      const params: Record<string, string> = {
        code,
        host: Buffer.from(`admin.shopify.com/store/${shopDomain.replace('.myshopify.com', '')}`).toString(
          'base64url',
        ),
        shop: shopDomain,
        state: q.state ?? '',
        timestamp: String(Math.floor(Date.now() / 1000)),
      };
      const hmac = signRedirect(params, app.apiSecret);
      const target = new URL(q.redirect_uri as string);
      for (const [k, v] of Object.entries({ ...params, hmac })) target.searchParams.set(k, v);
      return answer(302, '', { location: target.toString() });
    }
    if (path === '/admin/oauth/authorize/cancel' && req.method === 'POST')
      return answer(200, cancelledPage(shopDomain, shop));

    if (path === '/admin/oauth/access_token' && req.method === 'POST') {
      const b = (record.body ?? {}) as Record<string, unknown>;
      if (b.client_id !== app.apiKey || b.client_secret !== app.apiSecret)
        return answer(400, { error: 'invalid_client', error_description: 'Client credentials are invalid' });
      const grant = typeof b.code === 'string' ? codes.get(b.code) : undefined;
      if (grant) codes.delete(b.code as string);
      if (!grant || grant.shop !== shopDomain || grant.expires < Date.now())
        return answer(400, {
          error: 'invalid_request',
          error_description: 'The authorization code was not found or was already used',
        });
      const token = `shpat_${randomBytes(16).toString('hex')}`;
      tokens.set(token, { shop: shopDomain, secret: app.apiSecret, oauth: true });
      return answer(200, { access_token: token, scope: 'read_orders' });
    }

    const api = API.exec(path);
    if (!api) return answer(404, { errors: 'Not Found' });
    const failure = failures.shift();
    if (failure) return answer(failure, { errors: 'Internal Server Error' });
    const presented = record.headers['x-shopify-access-token'] ?? '';
    if (options.open && presented && !tokens.has(presented))
      tokens.set(presented, { shop: shopDomain, secret: 'unknown', oauth: false });
    const grant = tokens.get(presented);
    if (!grant || grant.shop !== shopDomain) return answer(401, { errors: INVALID_TOKEN });
    const version = api[1] as string;
    if (api[2] === 'shop' && req.method === 'GET') return answer(200, { shop: shopJson(shopDomain, shop) });
    if (api[2] === 'webhooks' && req.method === 'GET') {
      const address = record.query.address;
      const mine = hooks.filter(
        (h) => h.shop === shopDomain && h.secret === grant.secret && (!address || h.address === address),
      );
      return answer(200, { webhooks: mine.map(hookJson) });
    }
    if (api[2] === 'webhooks' && req.method === 'POST') {
      const w = ((record.body ?? {}) as { webhook?: Record<string, unknown> }).webhook ?? {};
      const topic = typeof w.topic === 'string' ? w.topic : '';
      const address = typeof w.address === 'string' ? w.address : '';
      if (!/^[a-z_]+\/[a-z_]+$/.test(topic) || !/^https?:\/\//.test(address))
        return answer(422, { errors: { topic: ["can't be blank"], address: ["can't be blank"] } });
      if (
        hooks.some(
          (h) =>
            h.shop === shopDomain && h.secret === grant.secret && h.topic === topic && h.address === address,
        )
      )
        return answer(422, { errors: { address: ['for this topic has already been taken'] } });
      const hook: FakeWebhook = {
        id: nextHookId++,
        shop: shopDomain,
        topic,
        address,
        format: 'json',
        api_version: version,
        created_at: new Date().toISOString(),
        secret: grant.secret,
      };
      hooks.push(hook);
      return answer(201, { webhook: hookJson(hook) });
    }
    return answer(405, { errors: 'Method Not Allowed' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    shopUrl: `${url}/{shop}`,
    requests,
    setShop(domain, shop) {
      shops.set(domain, shop);
      customTokens(domain, shop);
    },
    webhooks: (shop) => hooks.filter((h) => h.shop === shop),
    installedTokens: (shop) => [...tokens].filter(([, g]) => g.shop === shop && g.oauth).map(([t]) => t),
    uninstall(shop) {
      for (const [t, g] of tokens) if (g.shop === shop && g.oauth) tokens.delete(t);
      for (let i = hooks.length - 1; i >= 0; i--)
        if (hooks[i]?.shop === shop && hooks[i]?.secret === app.apiSecret) hooks.splice(i, 1);
    },
    failNext(n, status) {
      failures = [...failures, ...Array.from({ length: n }, () => status)];
    },
    async deliver(shop, topic, order, opts = {}) {
      const out: Delivery[] = [];
      for (const h of hooks.filter((x) => x.shop === shop && x.topic === topic)) {
        const headers = {
          'content-type': 'application/json',
          'x-shopify-topic': topic,
          'x-shopify-hmac-sha256': createHmac('sha256', h.secret).update(order).digest('base64'),
          'x-shopify-shop-domain': shop,
          'x-shopify-api-version': h.api_version,
          'x-shopify-webhook-id': opts.webhookId ?? randomUUID(),
          'x-shopify-triggered-at': new Date().toISOString(),
          'x-shopify-event-id': randomUUID(),
        };
        const res = await fetch(h.address, { method: 'POST', headers, body: order });
        out.push({ status: res.status, text: await res.text(), headers });
      }
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Shopify's `hmac` on a redirect to an app: hex HMAC-SHA256 of the sorted name=value pairs. */
export function signRedirect(params: Record<string, string>, secret: string): string {
  const message = Object.keys(params)
    .filter((k) => k !== 'hmac' && k !== 'signature')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  return createHmac('sha256', secret).update(message).digest('hex');
}

function shopJson(domain: string, shop: FakeShop) {
  const handle = domain.replace('.myshopify.com', '');
  return {
    id: 548380009 + handle.length,
    name: shop.name ?? handle,
    email: shop.owner,
    domain: domain,
    myshopify_domain: domain,
    shop_owner: shop.owner,
    currency: 'USD',
    iana_timezone: 'America/New_York',
    plan_name: 'basic',
    created_at: '2025-04-01T10:00:00-04:00',
  };
}

const hookJson = (h: FakeWebhook) => ({
  id: h.id,
  address: h.address,
  topic: h.topic,
  created_at: h.created_at,
  updated_at: h.created_at,
  format: h.format,
  fields: [],
  metafield_namespaces: [],
  api_version: h.api_version,
  private_metafield_namespaces: [],
});

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(raw: string, type: string | undefined): unknown {
  if (!raw) return null;
  if (type?.includes('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
