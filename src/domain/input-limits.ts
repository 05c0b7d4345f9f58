// The limits a business record's input must meet, whichever way it arrives. The database holds
// the same numbers as CHECK constraints, triggers and column types (migrations/0005, 0007, 0014),
// so /rest/v1 writes, which reach the tables with SQL, meet them too; this copy is what the
// domain's zod schemas (inputs.ts) check first and what the MCP tools offer a model.
// test/rls/input-limits.test.ts writes each limit and one past it to the tables and fails when a
// number here and its SQL copy disagree.

/** Longest text, in characters, per table and column. */
export const TEXT_MAX = {
  contacts: {
    first_name: 200,
    last_name: 200,
    email: 320,
    company: 200,
    job_title: 200,
    notes: 10_000,
  },
  orders: {
    shipping_address: 2000,
    shipping_phone_number: 40,
    customer_name: 300,
    customer_email: 320,
    customer_phone: 40,
    notes: 10_000,
  },
  order_items: { name: 300, sku: 100 },
  inventory_items: { name: 300, sku: 100, description: 10_000 },
  order_status_events: { note: 2000 },
} as const;

/** A contact's tags: how many, and how long each (after trimming; never empty). */
export const TAGS = { max: 50, maxLength: 100 } as const;

/** Units on one order line (order_items_quantity_check). */
export const QUANTITY = { min: 1, max: 1_000_000 } as const;

/** The largest price numeric(12, 2) holds; prices are in cents (two decimals at most). */
export const MAX_PRICE = 9_999_999_999.99;

/** Lines of one order (app.check_order_line_count). */
export const MAX_ORDER_LINES = 200;

/** What a phone number may be as typed, before it is normalized to E.164 (at most 16 characters). */
export const PHONE_INPUT_MAX = 40;
