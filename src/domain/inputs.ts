import { z } from 'zod';
import { fromZodIssues } from '../platform/errors.ts';
import { MAX_ORDER_LINES, MAX_PRICE, QUANTITY, TAGS, TEXT_MAX } from './input-limits.ts';
import { ORDER_STATUSES } from './order-lifecycle.ts';
import { PhoneInput } from './phone.ts';

// What the domain accepts to create and change records, with the limits of input-limits.ts. The
// domain's write functions parse their input with these, so every entry point meets them; the
// MCP tools offer the same schemas to a model (adding only how a field is shown to it).

const C = TEXT_MAX.contacts;
const O = TEXT_MAX.orders;
const L = TEXT_MAX.order_items;

export const Tag = z.string().trim().min(1).max(TAGS.maxLength);
export const Tags = z.array(Tag).max(TAGS.max);

/** Every field of a contact a caller may set. */
export const CONTACT_FIELDS = {
  first_name: z.string().trim().max(C.first_name),
  last_name: z.string().trim().max(C.last_name),
  email: z.email().max(C.email),
  phone: PhoneInput.describe('With country code, e.g. +14155550123'),
  company: z.string().trim().max(C.company),
  job_title: z.string().trim().max(C.job_title),
  tags: Tags,
  notes: z.string().max(C.notes),
  address: z.record(z.string(), z.unknown()).describe('e.g. {"line1","city","country"}'),
};
type F = typeof CONTACT_FIELDS;
export type Clearable = Exclude<keyof F, 'tags'>;
/** Every field but tags (emptied with tags: []) can be cleared. */
export const CLEARABLE = Object.keys(CONTACT_FIELDS).filter((k) => k !== 'tags') as [
  Clearable,
  ...Clearable[],
];

export const NewContact = z
  .strictObject(
    Object.fromEntries(Object.entries(CONTACT_FIELDS).map(([k, v]) => [k, v.optional()])) as {
      [K in keyof F]: z.ZodOptional<F[K]>;
    },
  )
  .refine((c) => c.first_name || c.last_name || c.email || c.phone || c.company, {
    message: 'Give at least one of first_name, last_name, email, phone or company',
  });

/** Changes to a contact: null clears a field; tags replaces them all, add_tags/remove_tags edit them. */
export const ContactChanges = z.strictObject({
  ...(Object.fromEntries(
    Object.entries(CONTACT_FIELDS)
      .filter(([k]) => k !== 'tags')
      .map(([k, v]) => [k, v.nullable().optional()]),
  ) as { [K in Clearable]: z.ZodOptional<z.ZodNullable<F[K]>> }),
  tags: Tags.optional(),
  add_tags: Tags.optional(),
  remove_tags: Tags.optional(),
});

/** Units of one line, and a price in cents: the shapes the MCP tool offers in its own words. */
export const Quantity = z.number().int().min(QUANTITY.min).max(QUANTITY.max);
export const Price = z.number().min(0).max(MAX_PRICE).multipleOf(0.01);

export const OrderLine = z.strictObject({
  item_id: z.guid().optional().describe('Inventory item; else matched by name, then sku'),
  name: z.string().trim().min(1).max(L.name),
  sku: z.string().trim().min(1).max(L.sku).optional(),
  quantity: Quantity,
  unit_price: Price.optional(),
});

export const FULFILLMENTS = ['delivery', 'pickup'] as const;
const DELIVERY_NEEDS = {
  address: 'Enter the delivery address, or make the order a pickup',
  phone_number: 'Enter the delivery phone number, or make the order a pickup',
};

export const NewOrder = z
  .strictObject({
    fulfillment: z.enum(FULFILLMENTS).optional(),
    address: z.string().trim().max(O.shipping_address).optional(),
    phone_number: PhoneInput.optional(),
    items: z.array(OrderLine).min(1).max(MAX_ORDER_LINES),
    contact_id: z.guid().optional(),
    customer_name: z.string().trim().max(O.customer_name).optional(),
    customer_email: z.email().max(O.customer_email).optional(),
    customer_phone: PhoneInput.optional(),
    notes: z.string().max(O.notes).optional(),
    currency: z
      .string()
      .regex(/^[A-Za-z]{3}$/)
      .optional()
      .describe('ISO 4217, default USD'),
  })
  // A delivery (the default) needs where and whom to deliver to; a pickup needs neither.
  .superRefine((o, ctx) => {
    if (o.fulfillment === 'pickup') return;
    for (const field of ['address', 'phone_number'] as const)
      if (!o[field]?.trim()) ctx.addIssue({ code: 'custom', path: [field], message: DELIVERY_NEEDS[field] });
  });

export const OrderStatusChange = z.strictObject({
  order_id: z.guid(),
  status: z.enum(ORDER_STATUSES),
  note: z.string().max(TEXT_MAX.order_status_events.note).optional(),
});

export type NewOrderInput = z.input<typeof NewOrder>;
export type OrderLineInput = z.output<typeof OrderLine>;
export type OrderStatusChangeInput = z.input<typeof OrderStatusChange>;

/** `input` as `schema` reads it, or a validation_error naming every field that breaks a limit. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  return parsed.data;
}
