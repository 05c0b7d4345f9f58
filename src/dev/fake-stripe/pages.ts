import type { FakeCheckoutSession, FakePortalSession, FakePrice, FakeSubscription } from './state.ts';

// The hosted pages a person sees: Checkout (pay or cancel, then sent to success_url / cancel_url)
// and the Customer Portal (change plan, change the number of additional agents, cancel, return).
// Plain HTML forms, so a browser test clicks them as a person would.

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>` +
  '<meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="data:,"></head>' +
  `<body><main><h1>${esc(title)}</h1>${body}</main></body></html>`;

export function checkoutPage(session: FakeCheckoutSession, prices: Map<string, FakePrice>): string {
  if (session.status !== 'open') return page('This checkout session is no longer open', '');
  const lines = session.line_items
    .map((l) => {
      const p = prices.get(l.price);
      return `<li>${esc(p?.nickname ?? l.price)} × ${l.quantity}: ${p ? usd(p.unit_amount * l.quantity) : '?'} a month</li>`;
    })
    .join('');
  return page(
    'Subscribe',
    `<p>Test mode (fake Stripe)</p><ul>${lines}</ul>` +
      `<form method="post" action="/c/pay/${esc(session.id)}/pay"><button type="submit">Pay and subscribe</button></form>` +
      `<form method="post" action="/c/pay/${esc(session.id)}/cancel"><button type="submit">Cancel and go back</button></form>`,
  );
}

export function portalPage(
  session: FakePortalSession,
  sub: FakeSubscription | null,
  prices: Map<string, FakePrice>,
): string {
  const back = `<p><a href="${esc(session.return_url)}">Return to the service</a></p>`;
  if (!sub || sub.status === 'canceled') return page('Billing', `<p>No active subscription.</p>${back}`);
  const planItem = sub.items.data.find((i) => i.price.metadata.kind === 'plan');
  const agentItem = sub.items.data.find((i) => i.price.metadata.kind === 'agent');
  const plans = [...prices.values()].filter((p) => p.metadata.kind === 'plan');
  const options = plans
    .map(
      (p) =>
        `<option value="${esc(p.id)}"${p.id === planItem?.price.id ? ' selected' : ''}>${esc(p.nickname)} (${usd(p.unit_amount)} a month)</option>`,
    )
    .join('');
  const action = (what: string) => `/p/session/${esc(session.id)}/${what}`;
  return page(
    'Billing',
    `<p>Current plan: <strong>${esc(planItem?.price.nickname ?? 'none')}</strong> (${esc(sub.status)})</p>` +
      `<p>Additional agents: ${agentItem?.quantity ?? 0}</p>` +
      `<form method="post" action="${action('plan')}"><label>New plan <select name="price">${options}</select></label>` +
      '<button type="submit">Update plan</button></form>' +
      `<form method="post" action="${action('agents')}"><label>Additional agents <input name="quantity" type="number" min="0" max="100" value="${agentItem?.quantity ?? 0}"></label>` +
      '<button type="submit">Update agents</button></form>' +
      `<form method="post" action="${action('cancel')}"><button type="submit">Cancel subscription</button></form>` +
      back,
  );
}
