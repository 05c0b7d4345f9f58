import type { Principal, Queryable } from '../platform/db/database.ts';
import { Params } from '../platform/db/params.ts';
import { notFound } from '../platform/errors.ts';
import type { Deps } from './deps.ts';
import { OrderStatusChange, type OrderStatusChangeInput, parseInput } from './inputs.ts';
import type { OrderStatus } from './order-lifecycle.ts';
import { listPage } from './pagination.ts';
import { type OrderRecord, OrderSummary } from './records.ts';

/** "42", "000042" and "ord-42" all mean ORD-000042. */
export function normalizeOrderNumber(raw: string): string {
  const digits = /^(?:ord-?)?0*(\d{1,12})$/i.exec(raw.trim())?.[1];
  return digits ? `ORD-${digits.padStart(6, '0')}` : raw.trim().toUpperCase();
}

/** A date alone means its start in UTC, whatever the database session's time zone. */
const utcInstant = (v: string) => (/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v);

export type OrderFilter = {
  status?: OrderStatus[];
  contact_id?: string;
  order_number?: string;
  created_after?: string;
  created_before?: string;
  limit: number;
  cursor?: string;
};

export async function listOrders(deps: Pick<Deps, 'db'>, principal: Principal, f: OrderFilter) {
  const p = new Params();
  const where: string[] = [];
  if (f.status?.length) where.push(`o.status = any (${p.add(f.status)}::text[])`);
  if (f.contact_id) where.push(`o.contact_id = ${p.add(f.contact_id)}`);
  if (f.order_number) where.push(`o.order_number = ${p.add(normalizeOrderNumber(f.order_number))}`);
  if (f.created_after) where.push(`o.created_at >= ${p.add(utcInstant(f.created_after))}::timestamptz`);
  if (f.created_before) where.push(`o.created_at < ${p.add(utcInstant(f.created_before))}::timestamptz`);
  const { items, next_cursor } = await listPage<OrderRecord>(deps, principal, {
    from: 'public.orders o',
    alias: 'o',
    // Only the summary's fields (OrderSummary): the whole row would be sent, parsed and dropped.
    row: `jsonb_build_object('id', o.id, 'order_number', o.order_number, 'status', o.status,
            'contact_id', o.contact_id, 'customer_name', o.customer_name, 'total', o.total,
            'currency', o.currency, 'created_at', o.created_at, 'item_count',
            (select count(*) from public.order_items i where i.organization_id = o.organization_id and i.order_id = o.id))`,
    where,
    p,
    cursor: f.cursor,
    limit: f.limit,
  });
  return { orders: items.map((o) => OrderSummary.parse(o)), next_cursor };
}

/** The order with its lines and status history, read in the caller's transaction. */
export async function readOrder(tx: Queryable, where: { id: string } | { order_number: string }) {
  const [by, value] =
    'id' in where ? ['o.id', where.id] : ['o.order_number', normalizeOrderNumber(where.order_number)];
  const [row] = await tx.query<{ r: OrderRecord }>(
    `select to_jsonb(o) || jsonb_build_object(
       'items', coalesce((select jsonb_agg(jsonb_build_object('id', i.id, 'order_id', i.order_id, 'item_id', i.item_id,
                  'name', i.name, 'sku', i.sku, 'quantity', i.quantity, 'unit_price', i.unit_price, 'total', i.total,
                  'auto_created', i.auto_created, 'line_number', i.line_number)
                  order by i.line_number nulls last, i.created_at, i.id)
                 from public.order_items i where i.organization_id = o.organization_id and i.order_id = o.id), '[]'),
       'status_history', coalesce((select jsonb_agg(jsonb_build_object('from_status', e.from_status,
                  'to_status', e.to_status, 'note', e.note, 'actor', e.actor, 'created_at', e.created_at)
                  order by e.created_at, e.id)
                 from public.order_status_events e where e.organization_id = o.organization_id and e.order_id = o.id), '[]')
     ) as r
     from public.orders o where ${by} = $1`,
    [value],
  );
  if (!row) throw notFound('order');
  return row.r;
}

export async function getOrder(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  where: { id: string } | { order_number: string },
) {
  return deps.db.asPrincipal(principal, (tx) => readOrder(tx, where), { readOnly: true });
}

/**
 * Moves an order to `status`. The database checks the lifecycle, moves the stock and records the
 * event (with `note`); asking for the status the order already has changes nothing.
 */
export async function updateOrderStatus(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  raw: OrderStatusChangeInput,
) {
  const input = parseInput(OrderStatusChange, raw);
  return deps.db.asPrincipal(principal, async (tx) => {
    const [row] = await tx.query<{ previous: OrderStatus }>(
      `select set_config('svc.status_note', $2, true), o.status as previous from public.orders o
        where o.id = $1 for update`,
      [input.order_id, input.note ?? ''],
    );
    if (!row) throw notFound('order');
    if (row.previous !== input.status) {
      await tx.query('update public.orders set status = $2 where id = $1', [input.order_id, input.status]);
    }
    return {
      previous_status: row.previous,
      changed: row.previous !== input.status,
      order: await readOrder(tx, { id: input.order_id }),
    };
  });
}
