import type { Principal } from '../platform/db/database.ts';
import type { Deps } from './deps.ts';
import { likeEscape } from './pagination.ts';

export const SEARCH_TYPES = ['contact', 'order', 'inventory_item'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export type SearchHit = {
  type: SearchType;
  id: string;
  title: string;
  subtitle: string | null;
  score: number;
};

// Scores: the whole field equals the query (100), a field starts with it (70), a word in it
// starts with it (55), it appears anywhere (30). Identifiers (email, phone, order number, SKU)
// win ties over names by a point, so "ORD-000012" puts that order first.
const score = (field: string, bonus = 0) => `case
  when lower(${field}) = $1 then ${100 + bonus}
  when lower(${field}) like $2 then ${70 + bonus}
  when lower(${field}) like $3 then ${55 + bonus}
  when lower(${field}) like $4 then ${30 + bonus}
  else 0 end`;

// Phone numbers are compared by digits, so "+1 415-555" finds +14155550123.
const phoneScore = (field: string) => `case
  when $5 = '' then 0
  when ${field} = '+' || $5 then 101
  when ${field} like '%' || $5 || '%' then 45
  else 0 end`;

const SQL = `
select * from (
  select 'contact' as type, c.id, coalesce(nullif(concat_ws(' ', c.first_name, c.last_name), ''), c.email, c.phone, c.company, '(unnamed)') as title,
         nullif(concat_ws(' · ', c.email, c.phone, c.company), '') as subtitle, c.created_at,
         greatest(${score("concat_ws(' ', c.first_name, c.last_name)")}, ${score('c.last_name')}, ${score('c.company')},
                  ${score('c.email', 1)}, ${phoneScore('c.phone')}) as score
    from public.contacts c where 'contact' = any ($6::text[])
  union all
  select 'order', o.id, o.order_number,
         nullif(concat_ws(' · ', o.status, o.customer_name, o.total::text || ' ' || o.currency), ''), o.created_at,
         greatest(${score('o.order_number', 1)}, ${score('o.customer_name')}, ${score('o.customer_email', 1)},
                  ${phoneScore('o.customer_phone')}, ${phoneScore('o.shipping_phone_number')})
    from public.orders o where 'order' = any ($6::text[])
  union all
  select 'inventory_item', i.id, i.name, nullif(concat_ws(' · ', i.sku, i.status), ''), i.created_at,
         greatest(${score('i.name')}, ${score('i.sku', 1)})
    from public.inventory_items i where 'inventory_item' = any ($6::text[])
) hits where score > 0
order by score desc, created_at desc, id limit $7`;

/** One query across contacts, orders and inventory, best matches first. */
export async function search(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  input: { query: string; types?: SearchType[]; limit: number },
) {
  const term = input.query.trim().toLowerCase();
  const esc = likeEscape(term);
  // Only a query that looks like a phone number is compared by its digits.
  const digits = /^[+\d\s().-]{4,}$/.test(term) ? term.replace(/\D/g, '') : '';
  const rows = await deps.db.asPrincipal(
    principal,
    (tx) =>
      tx.query<SearchHit>(SQL, [
        term,
        `${esc}%`,
        `% ${esc}%`,
        `%${esc}%`,
        digits.length >= 4 ? digits : '',
        input.types?.length ? input.types : SEARCH_TYPES,
        input.limit,
      ]),
    { readOnly: true },
  );
  return {
    query: input.query,
    hits: rows.map(({ type, id, title, subtitle, score }) => ({ type, id, title, subtitle, score })),
  };
}
