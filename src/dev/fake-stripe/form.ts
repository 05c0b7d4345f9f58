// Stripe's request bodies: application/x-www-form-urlencoded with bracketed keys, as the official
// SDKs send them (`line_items[0][price]=price_1&metadata[organization_id]=…`). Read into nested
// objects; objects whose keys are all indices become arrays.

type Nested = { [key: string]: Nested | string };

export function parseStripeForm(text: string): Record<string, unknown> {
  const root: Nested = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[');
    let node = root;
    path.forEach((part, i) => {
      if (i === path.length - 1) node[part] = value;
      else {
        if (typeof node[part] !== 'object') node[part] = {};
        node = node[part] as Nested;
      }
    });
  }
  return arrays(root) as Record<string, unknown>;
}

function arrays(v: Nested | string): unknown {
  if (typeof v === 'string') return v;
  const keys = Object.keys(v);
  const converted = Object.fromEntries(keys.map((k) => [k, arrays(v[k] as Nested | string)]));
  if (keys.length && keys.every((k) => /^\d+$/.test(k)))
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => converted[k]);
  return converted;
}
