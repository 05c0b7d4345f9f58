import { claimedOrganization, type Principal } from '../platform/db/database.ts';
import type { Deps } from './deps.ts';

export const SEARCH_TYPES = ['contact', 'order', 'inventory_item'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export type SearchHit = {
  type: SearchType;
  id: string;
  title: string;
  subtitle: string | null;
  score: number;
};

// Which rows match and how well is app.search (migrations/0037): candidates from each table's
// trigram index, scored (100 whole field, 70 prefix, 55 word prefix, 30 anywhere; identifiers a
// point higher; phone numbers by their digits), best first. Here only the hits' records are read,
// from the tables under RLS, which decides what the caller sees. The organization is named again
// as a value (the claims' own, else the setting) so each lookup is one primary-key probe.
const SQL = `
select h.type, h.id, h.score,
       case h.type
         when 'contact' then coalesce(nullif(concat_ws(' ', c.first_name, c.last_name), ''), c.email, c.phone, c.company, '(unnamed)')
         when 'order' then o.order_number
         else i.name end as title,
       case h.type
         when 'contact' then nullif(concat_ws(' · ', c.email, c.phone, c.company), '')
         when 'order' then nullif(concat_ws(' · ', o.status, o.customer_name, o.total::text || ' ' || o.currency), '')
         else nullif(concat_ws(' · ', i.sku, i.status), '') end as subtitle
  from app.search_cached($1, $2::text[], $3) h
  left join public.contacts c on h.type = 'contact' and c.organization_id = coalesce($4::uuid, app.current_org_id()) and c.id = h.id
  left join public.orders o on h.type = 'order' and o.organization_id = coalesce($4::uuid, app.current_org_id()) and o.id = h.id
  left join public.inventory_items i on h.type = 'inventory_item' and i.organization_id = coalesce($4::uuid, app.current_org_id()) and i.id = h.id
 where coalesce(c.id, o.id, i.id) is not null
 order by h.score desc, h.created_at desc, h.id`;

/** One query across contacts, orders and inventory, best matches first. */
export async function search(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  input: { query: string; types?: SearchType[]; limit: number },
) {
  // One statement: sent with the claims as one implicit transaction (db.queryAs).
  const rows = await deps.db.queryAs<SearchHit>(
    principal,
    SQL,
    [
      input.query,
      input.types?.length ? input.types : SEARCH_TYPES,
      input.limit,
      claimedOrganization(principal),
    ],
    { readOnly: true },
  );
  return {
    query: input.query,
    hits: rows.map(({ type, id, title, subtitle, score }) => ({ type, id, title, subtitle, score })),
  };
}
