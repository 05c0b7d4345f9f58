import type { z } from 'zod';
import type { Principal, Queryable } from '../platform/db/database.ts';
import { type AppError, notFound, toAppError } from '../platform/errors.ts';
import { insertContact } from './contacts.ts';
import type { Deps, Source } from './deps.ts';
import { NewOrder, type NewOrderInput, type OrderLineInput, parseInput } from './inputs.ts';
import { readOrder } from './orders.ts';
import { phoneOfOrganization } from './phone.ts';

type CreateOrderInput = z.output<typeof NewOrder>;

/** Something that did not link but did not stop the order either. */
export type OrderWarning = { code: string; message: string; line?: number };

type Item = { id: string; unit_price: string | number; currency: string; auto_created: boolean };
const ITEM = 'id, unit_price, currency, auto_created';

/**
 * Runs `fn` inside a savepoint: when it fails, the transaction carries on as if it had not run.
 * Linking inventory and contacts may fail (a plan ceiling, a race on a unique SKU) without
 * losing the order.
 */
export async function attempt<T>(
  tx: Queryable,
  fn: () => Promise<T>,
): Promise<{ ok: T } | { failed: AppError }> {
  await tx.query('savepoint link');
  try {
    const ok = await fn();
    await tx.query('release savepoint link');
    return { ok };
  } catch (err) {
    await tx.query('rollback to savepoint link');
    return { failed: toAppError(err) };
  }
}

/** Which key of a line decides first: the name (the spec's rule for orders made here) or the SKU (imports). */
export type MatchFirst = 'name' | 'sku';

/**
 * An item whose name matches the line's (case-insensitive) or whose SKU does, the one `first`
 * names winning a tie, else a new draft item.
 */
async function matchItem(
  tx: Queryable,
  line: OrderLineInput,
  currency: string,
  first: MatchFirst,
): Promise<Item> {
  const [match] = await tx.query<Item>(
    `select ${ITEM} from public.inventory_items
      where organization_id = app.current_org_id()
        and (lower(name) = lower(btrim($1)) or ($2::text is not null and lower(sku) = lower(btrim($2))))
      order by case when $3 = 'sku' then $2::text is not null and lower(sku) = lower(btrim($2))
                    else lower(name) = lower(btrim($1)) end desc,
               (status = 'active') desc, created_at, id limit 1`,
    [line.name, line.sku ?? null, first],
  );
  if (match) return { ...match, auto_created: false };
  const [created] = await tx.query<Item>(
    `insert into public.inventory_items (name, sku, unit_price, currency, status, auto_created)
     values (btrim($1), $2, $3, $4, 'draft', true) returning ${ITEM}`,
    [line.name, line.sku ?? null, line.unit_price ?? 0, currency],
  );
  return created as Item;
}

/**
 * The inventory item of a line: the given item_id when it exists in the organization, else a
 * match by name or SKU. Nothing here stops the order: what fails is reported as a warning.
 */
export async function linkItem(
  tx: Queryable,
  line: OrderLineInput,
  n: number,
  currency: string,
  warn: (w: OrderWarning) => void,
  first: MatchFirst = 'name',
): Promise<Item | null> {
  const label = `Line ${n + 1} ("${line.name}")`;
  if (line.item_id) {
    const [item] = await tx.query<Item>(
      `select ${ITEM} from public.inventory_items where organization_id = app.current_org_id() and id = $1`,
      [line.item_id],
    );
    if (item) return { ...item, auto_created: false };
    warn({
      code: 'not_found',
      line: n,
      message: `${label}: no inventory item ${line.item_id} in this organization; matched by name and SKU instead`,
    });
  }
  const linked = await attempt(tx, () => matchItem(tx, line, currency, first));
  if ('ok' in linked) return linked.ok;
  warn({
    code: linked.failed.code,
    line: n,
    message: `${label} is not linked to inventory: ${linked.failed.message}`,
  });
  return null;
}

/** A line's price: the one given, else the linked item's when it is in the order's currency. */
function linePrice(
  line: OrderLineInput,
  n: number,
  item: Item | null,
  currency: string,
  warn: (w: OrderWarning) => void,
) {
  if (line.unit_price !== undefined) return line.unit_price;
  if (!item) return 0;
  if (item.currency === currency) return Number(item.unit_price);
  warn({
    code: 'currency_mismatch',
    line: n,
    message: `Line ${n + 1} ("${line.name}"): the item is priced in ${item.currency}, the order is in ${currency}; give unit_price`,
  });
  return 0;
}

export type Customer = {
  email: string | null;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
};

/** The contact with the customer's email, else phone, else a new one; null when nothing identifies them. */
export async function findOrCreateCustomer(tx: Queryable, c: Customer, source: Source) {
  const email = c.email?.trim().toLowerCase() || null;
  if (!email && !c.phone && !c.first_name && !c.last_name) return null;
  const [found] = await tx.query<{ id: string }>(
    `select id from public.contacts where organization_id = app.current_org_id() and (email = $1 or phone = $2)
      order by (email = $1) desc nulls last, created_at, id limit 1`,
    [email, c.phone],
  );
  if (found) return found.id;
  const contact = await insertContact(tx, { ...c, email }, source);
  return contact.id;
}

/** The contact an order belongs to: the one named, else the customer's (findOrCreateCustomer). */
async function linkContact(tx: Queryable, input: CreateOrderInput, phone: string | null) {
  if (input.contact_id) {
    const [c] = await tx.query<{ id: string }>('select id from public.contacts where id = $1', [
      input.contact_id,
    ]);
    if (!c) throw notFound('contact');
    return c.id;
  }
  const [first, ...rest] = (input.customer_name?.trim() ?? '').split(/\s+/);
  return findOrCreateCustomer(
    tx,
    {
      email: input.customer_email ?? null,
      phone,
      first_name: first || null,
      last_name: rest.join(' ') || null,
    },
    'order',
  );
}

/**
 * svc_create_order: the order, its lines linked to inventory where possible, and its customer.
 * The database numbers the order and computes its totals; linking never blocks the order. The
 * input is checked against the domain's limits (inputs.ts); `source` is the entry point.
 */
export async function createOrder(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  raw: NewOrderInput,
  source: Source,
) {
  const input = parseInput(NewOrder, raw);
  return deps.db.asPrincipal(principal, async (tx) => {
    // A pickup has no shipping address or courier phone (inputs.ts: a delivery needs both).
    const delivery = input.fulfillment !== 'pickup';
    const shippingPhone =
      delivery && input.phone_number
        ? await phoneOfOrganization(tx, input.phone_number, 'phone_number')
        : null;
    const customerPhone = input.customer_phone
      ? await phoneOfOrganization(tx, input.customer_phone, 'customer_phone')
      : null;
    const warnings: OrderWarning[] = [];
    const currency = input.currency?.toUpperCase() ?? 'USD';
    let contactId: string | null = null;
    if (input.contact_id) {
      contactId = await linkContact(tx, input, customerPhone); // a named contact must exist
    } else {
      const linked = await attempt(tx, () => linkContact(tx, input, customerPhone));
      if ('ok' in linked) contactId = linked.ok;
      else
        warnings.push({
          code: linked.failed.code,
          message: `Customer not saved as a contact: ${linked.failed.message}`,
        });
    }
    const [order] = await tx.query<{ id: string }>(
      `insert into public.orders (contact_id, currency, shipping_address, shipping_phone_number,
         customer_name, customer_email, customer_phone, notes, source, fulfillment)
       values ($1, $2, $3, $4, $5, lower($6), $7, $8, $9, $10) returning id`,
      [
        contactId,
        currency,
        delivery ? input.address?.trim() || null : null,
        shippingPhone,
        input.customer_name?.trim() || null,
        input.customer_email?.trim() || null,
        customerPhone,
        input.notes ?? null,
        source,
        delivery ? 'delivery' : 'pickup',
      ],
    );
    const orderId = (order as { id: string }).id;
    const warn = (w: OrderWarning) => warnings.push(w);
    for (const [n, line] of input.items.entries()) {
      const item = await linkItem(tx, line, n, currency, warn);
      await tx.query(
        `insert into public.order_items (order_id, item_id, name, sku, quantity, unit_price, auto_created, line_number)
         values ($1, $2, btrim($3), $4, $5, $6, $7, $8)`,
        [
          orderId,
          item?.id ?? null,
          line.name,
          line.sku?.trim() || null,
          line.quantity,
          linePrice(line, n, item, currency, warn),
          item?.auto_created ?? false,
          n + 1,
        ],
      );
    }
    const full = await readOrder(tx, { id: orderId });
    return { order_number: full.order_number, order: full, warnings };
  });
}
