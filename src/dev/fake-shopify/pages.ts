// The fake Shopify's HTML: the install page a merchant sees when an app asks to be installed
// (Install / Cancel, both plain form posts so a browser test clicks real buttons), what Cancel
// leaves, and Shopify's plain error page.

/** What a page shows of a shop (server.ts's FakeShop has it). */
type Shop = { owner: string; name?: string };

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head><body><main>${body}</main></body></html>`;

const hidden = (q: Record<string, string>) =>
  Object.entries(q)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');

/** "Install app": what the app asks for, the shop, who is signed in, and the two buttons. */
export function authorizePage(domain: string, shop: Shop, q: Record<string, string>) {
  const scopes = (q.scope ?? '').split(',').filter(Boolean);
  return page(
    'Install app',
    `<h1>Install app on ${esc(shop.name ?? domain)}</h1>
<p>Signed in as ${esc(shop.owner)} (${esc(domain)})</p>
<p>This app will be able to:</p><ul>${scopes.map((s) => `<li>${esc(s)}</li>`).join('')}</ul>
<form method="post" action="/${esc(domain)}/admin/oauth/authorize/approve">${hidden(q)}<button type="submit">Install</button></form>
<form method="post" action="/${esc(domain)}/admin/oauth/authorize/cancel">${hidden(q)}<button type="submit">Cancel</button></form>`,
  );
}

/** Cancel keeps the merchant in their admin; the app hears nothing. */
export const cancelledPage = (domain: string, shop: Shop) =>
  page('Apps', `<h1>${esc(shop.name ?? domain)}</h1><p>The app was not installed.</p>`);

export const errorPage = (message: string) =>
  page('Shopify', `<h1>Oops, something went wrong.</h1><p>${esc(message)}</p>`);
