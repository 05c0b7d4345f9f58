// A local stand-in for Stripe, for development (`svc dev fake-stripe`) and tests. A real HTTP
// server that speaks the few API endpoints the service's official SDK calls — customers, Checkout
// sessions, Customer Portal sessions, subscriptions and subscription items — with Stripe's
// bearer-key check, form-encoded bodies, Idempotency-Key replay and error format; serves the hosted
// Checkout and Portal pages a person clicks through; and posts events to a webhook URL signed
// exactly as Stripe signs them (Stripe-Signature: t=…,v1=…). The service never imports this file;
// it reaches the fake only through STRIPE_API_URL.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseStripeForm } from './form.ts';
import { checkoutPage, portalPage } from './pages.ts';
import { stripeSignature } from './signature.ts';
import {
  defaultPrices,
  type FakeCheckoutSession,
  type FakeCustomer,
  type FakeEvent,
  type FakeItem,
  type FakePortalSession,
  type FakePrice,
  type FakeSubscription,
  stripeId,
} from './state.ts';

export type { FakeEvent, FakePrice, FakeSubscription } from './state.ts';

export type FakeStripeOptions = {
  port?: number;
  host?: string;
  /** The secret key the service must send (Authorization: Bearer). */
  secretKey: string;
  /** The endpoint secret events are signed with (the service's STRIPE_WEBHOOK_SECRET). */
  webhookSecret: string;
  /** Where events are posted; settable later (the service's address is known only once it runs). */
  webhookUrl?: string;
  prices?: FakePrice[];
  /** Called once per API request (the CLI prints it; never a key). */
  onRequest?: (line: { method: string; path: string; status: number }) => void;
};

export type Delivery = { event: FakeEvent; status: number | null };

export type FakeStripe = {
  url: string;
  webhookUrl: string | undefined;
  /** While true, events are kept in `held` instead of posted (tests deliver them in their own order). */
  hold: boolean;
  held: FakeEvent[];
  events: FakeEvent[];
  deliveries: Delivery[];
  customers: Map<string, FakeCustomer>;
  subscriptions: Map<string, FakeSubscription>;
  checkoutSessions: Map<string, FakeCheckoutSession>;
  /** Posts an event (again): signed now, or with another timestamp or secret to test refusals. */
  deliver(event: FakeEvent, opts?: { timestamp?: number; secret?: string }): Promise<number | null>;
  /** Settles in flight deliveries (tests wait for them). */
  settled(): Promise<void>;
  /** The card is declined at renewal: past_due, invoice.payment_failed. */
  failPayment(subscriptionId: string): Promise<void>;
  /** The retried invoice is paid: active, invoice.paid. */
  payInvoice(subscriptionId: string): Promise<void>;
  close(): Promise<void>;
};

const API_VERSION = '2026-10-28.endive';
const now = () => Math.floor(Date.now() / 1000);
/** Before each attempt at a webhook delivery: at once, then after these pauses. */
const RETRY_WAITS_MS = [0, 250, 1000, 3000];

class StripeError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly code?: string,
    readonly param?: string,
  ) {
    super(message);
  }
}
const missing = (what: string, id: string, param = 'id') =>
  new StripeError(404, 'invalid_request_error', `No such ${what}: '${id}'`, 'resource_missing', param);
const invalid = (message: string, param: string) =>
  new StripeError(400, 'invalid_request_error', message, 'parameter_invalid_empty', param);

export async function startFakeStripe(opts: FakeStripeOptions): Promise<FakeStripe> {
  const prices = new Map((opts.prices ?? defaultPrices()).map((p) => [p.id, p]));
  const customers = new Map<string, FakeCustomer>();
  const subscriptions = new Map<string, FakeSubscription>();
  const checkoutSessions = new Map<string, FakeCheckoutSession>();
  const portalSessions = new Map<string, FakePortalSession>();
  const idempotent = new Map<string, { status: number; body: unknown }>();
  const inFlight = new Set<Promise<unknown>>();
  let base = '';

  const fake: FakeStripe = {
    url: '',
    webhookUrl: opts.webhookUrl,
    hold: false,
    held: [],
    events: [],
    deliveries: [],
    customers,
    subscriptions,
    checkoutSessions,
    async deliver(event, o = {}) {
      if (!fake.webhookUrl) return null;
      const payload = JSON.stringify(event, null, 2);
      const header = stripeSignature(payload, o.secret ?? opts.webhookSecret, o.timestamp ?? now());
      const delivery: Delivery = { event, status: null };
      fake.deliveries.push(delivery);
      // Stripe sends an event again when the endpoint could not be reached or failed (5xx), for
      // days; here a few times within seconds. A refusal (4xx) is an answer, not sent again here.
      for (const wait of RETRY_WAITS_MS) {
        if (wait) await new Promise((resolve) => setTimeout(resolve, wait));
        try {
          const res = await fetch(fake.webhookUrl, {
            method: 'POST',
            headers: {
              'content-type': 'application/json; charset=utf-8',
              'stripe-signature': header,
              'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
            },
            body: payload,
          });
          await res.arrayBuffer();
          delivery.status = res.status;
        } catch {
          delivery.status = null; // not reached: a connection refused or reset
        }
        if (delivery.status !== null && delivery.status < 500) break;
      }
      return delivery.status;
    },
    async settled() {
      while (inFlight.size) await Promise.allSettled([...inFlight]);
    },
    async failPayment(id) {
      const sub = subscriptionOf(id);
      sub.status = 'past_due';
      emit('invoice.payment_failed', invoiceFor(sub, 'open'));
      emit('customer.subscription.updated', sub);
    },
    async payInvoice(id) {
      const sub = subscriptionOf(id);
      sub.status = 'active';
      emit('invoice.paid', invoiceFor(sub, 'paid'));
      emit('customer.subscription.updated', sub);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  /** Events are snapshots: a later change to the object does not change an event already made. */
  function emit(type: string, object: unknown) {
    const event: FakeEvent = {
      id: stripeId('evt'),
      object: 'event',
      api_version: API_VERSION,
      created: now(),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object: structuredClone(object) },
    };
    fake.events.push(event);
    if (fake.hold) fake.held.push(event);
    else {
      const p = fake.deliver(event).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }

  function invoiceFor(sub: FakeSubscription, status: 'open' | 'paid') {
    return {
      id: stripeId('in'),
      object: 'invoice',
      customer: sub.customer,
      status,
      amount_due: sub.items.data.reduce((sum, i) => sum + i.price.unit_amount * i.quantity, 0),
      currency: 'usd',
      attempt_count: 1,
      parent: {
        type: 'subscription_details',
        subscription_details: { subscription: sub.id, metadata: sub.metadata },
      },
      created: now(),
    };
  }

  function subscriptionOf(id: string) {
    const sub = subscriptions.get(id);
    if (!sub) throw missing('subscription', id);
    return sub;
  }
  const priceOf = (id: unknown, param: string) => {
    const price = typeof id === 'string' ? prices.get(id) : undefined;
    if (!price)
      throw new StripeError(
        400,
        'invalid_request_error',
        `No such price: '${String(id)}'`,
        'resource_missing',
        param,
      );
    return price;
  };
  const item = (sub: FakeSubscription, price: FakePrice, quantity: number): FakeItem => ({
    id: stripeId('si'),
    object: 'subscription_item',
    price,
    quantity,
    subscription: sub.id,
    created: now(),
  });
  const quantityOf = (v: unknown, param: string) => {
    const n = v === undefined ? 1 : Number(v);
    if (!Number.isInteger(n) || n < 0) throw invalid('Invalid integer', param);
    return n;
  };

  function subscribe(session: FakeCheckoutSession): FakeSubscription {
    const sub: FakeSubscription = {
      id: stripeId('sub'),
      object: 'subscription',
      livemode: false,
      created: now(),
      customer: session.customer,
      status: 'active',
      cancel_at_period_end: false,
      canceled_at: null,
      metadata: session.subscription_data_metadata,
      items: { object: 'list', data: [], has_more: false, url: '/v1/subscription_items' },
      latest_invoice: null,
    };
    sub.items.url = `/v1/subscription_items?subscription=${sub.id}`;
    sub.items.data = session.line_items.map((l) => item(sub, priceOf(l.price, 'line_items'), l.quantity));
    subscriptions.set(sub.id, sub);
    return sub;
  }

  function cancel(sub: FakeSubscription) {
    sub.status = 'canceled';
    sub.canceled_at = now();
    emit('customer.subscription.deleted', sub);
  }

  /** Applies `items[n][id|price|quantity|deleted]` as the subscriptions API does. */
  function updateItems(sub: FakeSubscription, items: unknown) {
    for (const [n, raw] of (Array.isArray(items) ? items : []).entries()) {
      const it = raw as Record<string, string>;
      const existing = it.id ? sub.items.data.find((i) => i.id === it.id) : undefined;
      if (it.id && !existing) throw missing('subscription item', it.id, `items[${n}][id]`);
      if (existing && it.deleted === 'true') sub.items.data = sub.items.data.filter((i) => i !== existing);
      else if (existing) {
        if (it.price) existing.price = priceOf(it.price, `items[${n}][price]`);
        if (it.quantity !== undefined) existing.quantity = quantityOf(it.quantity, `items[${n}][quantity]`);
      } else
        sub.items.data.push(
          item(
            sub,
            priceOf(it.price, `items[${n}][price]`),
            quantityOf(it.quantity, `items[${n}][quantity]`),
          ),
        );
    }
  }

  type Answer = { status: number; body: unknown } | { redirect: string } | { html: string };

  function api(method: string, path: string, body: Record<string, unknown>, query: URLSearchParams): Answer {
    const ok = (b: unknown) => ({ status: 200, body: b });
    const customerPath = /^\/v1\/customers\/([^/]+)$/.exec(path);
    const subscriptionPath = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
    const itemPath = /^\/v1\/subscription_items\/([^/]+)$/.exec(path);
    if (method === 'POST' && path === '/v1/customers') {
      const c: FakeCustomer = {
        id: stripeId('cus'),
        object: 'customer',
        livemode: false,
        created: now(),
        email: typeof body.email === 'string' ? body.email : null,
        metadata: (body.metadata as Record<string, string>) ?? {},
      };
      customers.set(c.id, c);
      return ok(c);
    }
    if (method === 'GET' && customerPath) {
      const c = customers.get(customerPath[1] as string);
      if (!c) throw missing('customer', customerPath[1] as string);
      return ok(c);
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      if (body.mode !== 'subscription') throw invalid('Only subscription mode is faked', 'mode');
      const customer = String(body.customer ?? '');
      if (!customers.has(customer)) throw missing('customer', customer, 'customer');
      for (const f of ['success_url', 'cancel_url'])
        if (typeof body[f] !== 'string' || !/^https?:\/\//.test(body[f] as string))
          throw invalid(`Not a valid URL`, f);
      const lines = (Array.isArray(body.line_items) ? body.line_items : []) as Record<string, string>[];
      if (!lines.length) throw invalid('line_items is required in subscription mode', 'line_items');
      const id = stripeId('cs_test');
      const s: FakeCheckoutSession = {
        id,
        object: 'checkout.session',
        livemode: false,
        created: now(),
        mode: 'subscription',
        status: 'open',
        payment_status: 'unpaid',
        customer,
        client_reference_id: typeof body.client_reference_id === 'string' ? body.client_reference_id : null,
        metadata: (body.metadata as Record<string, string>) ?? {},
        subscription_data_metadata:
          ((body.subscription_data as Record<string, unknown> | undefined)?.metadata as Record<
            string,
            string
          >) ?? {},
        line_items: lines.map((l, n) => ({
          price: priceOf(l.price, `line_items[${n}][price]`).id,
          quantity: quantityOf(l.quantity, `line_items[${n}][quantity]`),
        })),
        success_url: body.success_url as string,
        cancel_url: body.cancel_url as string,
        subscription: null,
        url: `${base}/c/pay/${id}`,
      };
      checkoutSessions.set(id, s);
      return ok(s);
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      const customer = String(body.customer ?? '');
      if (!customers.has(customer)) throw missing('customer', customer, 'customer');
      const id = stripeId('bps');
      const s: FakePortalSession = {
        id,
        object: 'billing_portal.session',
        livemode: false,
        created: now(),
        customer,
        return_url: typeof body.return_url === 'string' ? body.return_url : base,
        url: `${base}/p/session/${id}`,
      };
      portalSessions.set(id, s);
      return ok(s);
    }
    if (subscriptionPath) {
      const sub = subscriptionOf(subscriptionPath[1] as string);
      if (method === 'GET') return ok(sub);
      if (method === 'DELETE') {
        cancel(sub);
        return ok(sub);
      }
      if (method === 'POST') {
        updateItems(sub, body.items);
        if (body.cancel_at_period_end !== undefined)
          sub.cancel_at_period_end = body.cancel_at_period_end === 'true';
        emit('customer.subscription.updated', sub);
        return ok(sub);
      }
    }
    if (method === 'POST' && path === '/v1/subscription_items') {
      const sub = subscriptionOf(String(body.subscription ?? ''));
      const it = item(sub, priceOf(body.price, 'price'), quantityOf(body.quantity, 'quantity'));
      sub.items.data.push(it);
      emit('customer.subscription.updated', sub);
      return ok(it);
    }
    if (itemPath && method === 'POST') {
      const id = itemPath[1] as string;
      const sub = [...subscriptions.values()].find((s) => s.items.data.some((i) => i.id === id));
      const it = sub?.items.data.find((i) => i.id === id);
      if (!sub || !it) throw missing('subscription item', id);
      if (body.quantity !== undefined) it.quantity = quantityOf(body.quantity, 'quantity');
      if (body.price !== undefined) it.price = priceOf(body.price, 'price');
      emit('customer.subscription.updated', sub);
      return ok(it);
    }
    if (method === 'GET' && path === '/v1/subscriptions') {
      const customer = query.get('customer');
      const data = [...subscriptions.values()].filter((s) => !customer || s.customer === customer);
      return ok({ object: 'list', data, has_more: false, url: '/v1/subscriptions' });
    }
    throw new StripeError(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}).`);
  }

  /** The hosted pages and what their buttons post. */
  function hosted(method: string, path: string, form: URLSearchParams): Answer | null {
    const checkout = /^\/c\/pay\/([^/]+)(?:\/(pay|cancel))?$/.exec(path);
    const portal = /^\/p\/session\/([^/]+)(?:\/(plan|agents|cancel))?$/.exec(path);
    let m = checkout;
    if (m) {
      const session = checkoutSessions.get(m[1] as string);
      if (!session)
        return { status: 404, body: { error: { type: 'invalid_request_error', message: 'No such page' } } };
      if (method === 'GET' && !m[2]) return { html: checkoutPage(session, prices) };
      if (method === 'POST' && m[2] === 'cancel') return { redirect: session.cancel_url };
      if (method === 'POST' && m[2] === 'pay' && session.status === 'open') {
        const sub = subscribe(session);
        Object.assign(session, { status: 'complete', payment_status: 'paid', subscription: sub.id });
        // Stripe's order for a new subscription; each delivered on its own, none waited for.
        emit('customer.subscription.created', sub);
        emit('invoice.paid', invoiceFor(sub, 'paid'));
        emit('checkout.session.completed', session);
        return { redirect: session.success_url.replace('{CHECKOUT_SESSION_ID}', session.id) };
      }
      return { redirect: `/c/pay/${session.id}` };
    }
    m = portal;
    if (m) {
      const session = portalSessions.get(m[1] as string);
      if (!session)
        return { status: 404, body: { error: { type: 'invalid_request_error', message: 'No such page' } } };
      const sub =
        [...subscriptions.values()]
          .reverse()
          .find((s) => s.customer === session.customer && s.status !== 'canceled') ?? null;
      if (method === 'GET' && !m[2]) return { html: portalPage(session, sub, prices) };
      if (method === 'POST' && sub) {
        if (m[2] === 'cancel') cancel(sub);
        else if (m[2] === 'plan') {
          const price = priceOf(form.get('price'), 'price');
          const planItem = sub.items.data.find((i) => i.price.metadata.kind === 'plan');
          if (planItem) planItem.price = price;
          // The agents item moves to the new plan's per-agent price.
          const agentItem = sub.items.data.find((i) => i.price.metadata.kind === 'agent');
          const agentPrice = [...prices.values()].find(
            (p) => p.metadata.kind === 'agent' && p.metadata.plan === price.metadata.plan,
          );
          if (agentItem && agentPrice) agentItem.price = agentPrice;
          emit('customer.subscription.updated', sub);
        } else if (m[2] === 'agents') {
          // Like Stripe's portal: the quantity of an item the subscription has, never a new item.
          const agentItem = sub.items.data.find((i) => i.price.metadata.kind === 'agent');
          if (agentItem) {
            agentItem.quantity = quantityOf(form.get('quantity') ?? '0', 'quantity');
            emit('customer.subscription.updated', sub);
          }
        }
      }
      return { redirect: `/p/session/${session.id}` };
    }
    return null;
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    let answer: Answer;
    try {
      const page = hosted(method, url.pathname, new URLSearchParams(text));
      if (page) answer = page;
      else if (!url.pathname.startsWith('/v1/'))
        answer = { status: 404, body: { error: { type: 'invalid_request_error', message: 'Not found' } } };
      else {
        const auth = req.headers.authorization ?? '';
        if (auth !== `Bearer ${opts.secretKey}`)
          throw new StripeError(
            401,
            'invalid_request_error',
            auth ? 'Invalid API Key provided: sk_****' : 'You did not provide an API key.',
          );
        const key = req.headers['idempotency-key'];
        const replay = typeof key === 'string' && method === 'POST' ? idempotent.get(key) : undefined;
        answer = replay ?? api(method, url.pathname, parseStripeForm(text), url.searchParams);
        if (typeof key === 'string' && method === 'POST' && !replay && 'status' in answer)
          idempotent.set(key, answer);
      }
    } catch (err) {
      if (!(err instanceof StripeError)) throw err;
      answer = {
        status: err.status,
        body: {
          error: {
            type: err.type,
            message: err.message,
            ...(err.code
              ? {
                  code: err.code,
                  doc_url: `https://stripe.com/docs/error-codes/${err.code.replace(/_/g, '-')}`,
                }
              : {}),
            ...(err.param ? { param: err.param } : {}),
          },
        },
      };
    }
    if ('redirect' in answer) {
      res.writeHead(303, { location: answer.redirect });
      res.end();
    } else if ('html' in answer) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(answer.html);
    } else {
      res.writeHead(answer.status, {
        'content-type': 'application/json',
        'request-id': stripeId('req'),
        'stripe-version': API_VERSION,
      });
      res.end(JSON.stringify(answer.body));
    }
    opts.onRequest?.({ method, path: url.pathname, status: 'status' in answer ? answer.status : 303 });
  }

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  fake.url = base;
  return fake;
}
