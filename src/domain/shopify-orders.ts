import type { ShopifyLifecycle, ShopifyOrder } from '../channels/shopify-order.ts';
import type { Queryable } from '../platform/db/database.ts';
import { attempt, findOrCreateCustomer, linkItem, type OrderWarning } from './order-create.ts';
import { type OrderStatus, pathTo } from './order-lifecycle.ts';
import { e164, international, organizationCountry } from './phone.ts';

// A Shopify order webhook applied to this service's orders (docs/webhooks.md "Shopify"), in the
// worker's transaction on the service path, acting for the shop's organization. One order per
// Shopify order (source shopify, external_id its id): the first delivery creates it, later ones
// update it, whatever order they arrive in — a payload whose updated_at is not newer than the one
// applied changes nothing. Customers and lines are linked by the order-creation rules (lines by
// SKU first: a shop's SKUs are its own keys); the status walks the lifecycle one allowed move at a
// time, so stock moves as it would have; a state the lifecycle cannot reach is recorded as a
// status event note. Money is Shopify's; a total that still differs (duties, tips) is noted.

export type ShopifyImport =
  | { outcome: 'stale'; order_id: string; applied_at: string }
  | { outcome: 'created' | 'updated'; order_id: string; status: OrderStatus; notes: string[] };

type Existing = { id: string; status: OrderStatus; external_updated_at: string | null; newer: boolean };

const note = (s: string) => s.slice(0, 2000);

/**
 * The lifecycle status a Shopify order's state means: cancelled or voided before shipping is
 * cancelled; refunded or restocked after it is returned; fulfilled is shipped (delivered once every
 * shipment says so); partly fulfilled is processing; paid or authorized is confirmed; else pending.
 */
function statusOf(p: ShopifyLifecycle): OrderStatus {
  const financial = p.financial_status ?? 'pending';
  const fulfillment = p.fulfillment_status ?? null;
  const shippedOut = fulfillment === 'fulfilled' || fulfillment === 'partial';
  if (fulfillment === 'restocked' || (shippedOut && financial === 'refunded')) return 'returned';
  if (p.cancelled_at || financial === 'voided' || financial === 'refunded') return 'cancelled';
  if (fulfillment === 'fulfilled') {
    const shipments = p.fulfillments ?? [];
    return shipments.length && shipments.every((f) => f.shipment_status === 'delivered')
      ? 'delivered'
      : 'shipped';
  }
  if (fulfillment === 'partial') return 'processing';
  if (['paid', 'partially_paid', 'authorized', 'partially_refunded'].includes(financial)) return 'confirmed';
  return 'pending';
}

export async function importShopifyOrder(
  tx: Queryable,
  organizationId: string,
  o: ShopifyOrder,
  topic: string,
): Promise<ShopifyImport> {
  // The organization's rows only: queries shared with the request path filter by
  // app.current_org_id(), and new rows take it as their organization. Status events name Shopify.
  await tx.query(
    `select set_config('svc.org_id', $1, true), set_config('svc.actor', 'shopify', true),
            pg_advisory_xact_lock(hashtextextended('shopify-order:' || $1 || ':' || $2, 0))`,
    [organizationId, o.id],
  );
  const [existing] = await tx.query<Existing>(
    `select id, status, external_updated_at::text, external_updated_at is null or external_updated_at < $2::timestamptz as newer
       from public.orders where organization_id = app.current_org_id() and source = 'shopify' and external_id = $1
        for update`,
    [o.id, o.updated_at],
  );
  if (existing && !existing.newer)
    return { outcome: 'stale', order_id: existing.id, applied_at: existing.external_updated_at ?? '' };

  const notes: string[] = [];
  const warn = (w: OrderWarning) => notes.push(w.message);
  const label = `Shopify ${o.name ?? o.id} (${topic})`;
  let orderId: string;
  let status: OrderStatus;
  if (existing) {
    orderId = existing.id;
    status = existing.status;
    await tx.query(
      `update public.orders set ${ORDER_FIELDS.map((f, i) => `${f} = $${i + 2}`).join(', ')}
        where organization_id = app.current_org_id() and id = $1`,
      [orderId, ...(await orderValues(tx, o, notes))],
    );
    if (await linesDiffer(tx, orderId, o)) {
      if (status === 'pending') {
        await tx.query(
          'delete from public.order_items where organization_id = app.current_org_id() and order_id = $1',
          [orderId],
        );
        await insertLines(tx, orderId, o, warn);
      } else notes.push(`Shopify changed the lines, but a ${status} order keeps its lines (they hold stock)`);
    }
  } else {
    const values = await orderValues(tx, o, notes);
    // The creation event's note says where the order came from and what did not link.
    await tx.query(`select set_config('svc.status_note', $1, true)`, [note(`Imported from ${label}`)]);
    const [row] = await tx.query<{ id: string }>(
      `insert into public.orders (source, external_id, ${ORDER_FIELDS.join(', ')})
       values ('shopify', $1, ${ORDER_FIELDS.map((_, i) => `$${i + 2}`).join(', ')}) returning id`,
      [o.id, ...values],
    );
    orderId = (row as { id: string }).id;
    status = 'pending';
    await insertLines(tx, orderId, o, warn);
  }

  const shopifyStatus = statusOf(o.lifecycle);
  const path = pathTo(status, shopifyStatus);
  if (path === null)
    notes.push(
      `Shopify says ${o.state} (${shopifyStatus}), which the lifecycle cannot reach from ${status}; the order stays ${status}`,
    );
  for (const next of path ?? []) {
    await tx.query(`select set_config('svc.status_note', $1, true)`, [note(`${label}: ${o.state}`)]);
    await tx.query(
      'update public.orders set status = $2 where organization_id = app.current_org_id() and id = $1',
      [orderId, next],
    );
    status = next;
  }

  const [totals] = await tx.query<{ total: string }>(
    'select total::text from public.orders where organization_id = app.current_org_id() and id = $1',
    [orderId],
  );
  if (o.total_price !== null && totals && Number(totals.total) !== Number(o.total_price))
    notes.push(
      `Shopify charged ${o.total_price} ${o.currency}; the lines, discounts, shipping and tax kept here make ${totals.total} (duties and tips are not kept)`,
    );
  if (notes.length)
    await tx.query(
      `insert into public.order_status_events (organization_id, order_id, from_status, to_status, note, actor)
       values (app.current_org_id(), $1, $2, $2, $3, 'shopify')`,
      [orderId, status, note(`${label}: ${notes.join('; ')}`)],
    );
  return { outcome: existing ? 'updated' : 'created', order_id: orderId, status, notes };
}

const ORDER_FIELDS = [
  'external_name',
  'external_updated_at',
  'currency',
  'contact_id',
  'customer_name',
  'customer_email',
  'customer_phone',
  'shipping_address',
  'shipping_phone_number',
  'notes',
  'tax_total',
  'shipping_total',
  'discount_total',
  'taxes_included',
] as const;

/** The values of ORDER_FIELDS, in order; the customer found or created (a failure is a note). */
async function orderValues(tx: Queryable, o: ShopifyOrder, notes: string[]): Promise<unknown[]> {
  const c = o.customer;
  // A phone typed in national form on the shop is read with the organization's country.
  const national = [c.phone, o.shipping_phone].some((p) => p && !international(p));
  const country = national ? await organizationCountry(tx) : null;
  const phone = c.phone ? e164(c.phone, country) : null;
  const linked = await attempt(tx, () => findOrCreateCustomer(tx, { ...c, phone }, 'shopify'));
  if ('failed' in linked) notes.push(`Customer not saved as a contact: ${linked.failed.message}`);
  const name = [c.first_name, c.last_name].filter(Boolean).join(' ') || null;
  return [
    o.name,
    o.updated_at,
    o.currency,
    'ok' in linked ? linked.ok : null,
    name?.slice(0, 300) ?? null,
    c.email?.toLowerCase().slice(0, 320) ?? null,
    phone,
    o.shipping_address,
    o.shipping_phone ? e164(o.shipping_phone, country) : null,
    o.note,
    o.tax_total,
    o.shipping_total,
    o.discount_total,
    o.taxes_included,
  ];
}

async function insertLines(tx: Queryable, orderId: string, o: ShopifyOrder, warn: (w: OrderWarning) => void) {
  for (const [n, line] of o.lines.entries()) {
    const input = {
      name: line.name,
      sku: line.sku ?? undefined,
      quantity: line.quantity,
      unit_price: Number(line.unit_price),
    };
    const item = await linkItem(tx, input, n, o.currency, warn, 'sku');
    await tx.query(
      `insert into public.order_items (organization_id, order_id, item_id, name, sku, quantity, unit_price, auto_created, line_number)
       values (app.current_org_id(), $1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        orderId,
        item?.id ?? null,
        line.name,
        line.sku,
        line.quantity,
        line.unit_price,
        item?.auto_created ?? false,
        n + 1,
      ],
    );
  }
}

/** Whether the order's lines (name, SKU, quantity, price, in order) are not the payload's. */
async function linesDiffer(tx: Queryable, orderId: string, o: ShopifyOrder): Promise<boolean> {
  const rows = await tx.query<{ k: string }>(
    `select concat_ws('|', name, sku, quantity, unit_price) as k from public.order_items
      where organization_id = app.current_org_id() and order_id = $1 order by line_number, created_at, id`,
    [orderId],
  );
  const given = o.lines.map((l) =>
    [l.name, l.sku, l.quantity, Number(l.unit_price).toFixed(2)].filter((v) => v !== null).join('|'),
  );
  return rows.length !== given.length || rows.some((r, i) => r.k !== given[i]);
}
