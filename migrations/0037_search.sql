-- One search design for contacts, orders and inventory items (docs/decisions.md, "Search on
-- indexes"): every substring search a tenant makes (/rest/v1 `ilike` on these tables, the MCP list
-- filters, svc_search, the dashboard through /rest/v1) asks the same two things of the database.
--
-- 1. Which rows may match: each table has one search text (its searchable fields, lower-cased,
--    joined by spaces) with one trigram index on it, and a search view read with the owner's
--    rights (as 0015's), restricted to the caller's organization and to callers who may read, so
--    the planner may make `search_text like …` an index condition where RLS would not let it.
--    The view gives candidates only: a row is read from its table under RLS, which decides what
--    the caller sees, and the caller's own condition (a column's `ilike`) is checked again there.
--    The search text holds every searched field whole, so a match in a field is a match in it.
-- 2. How well a row matches (svc_search): app.search scores the candidates only, never the whole
--    tenant, and returns the best.
--
-- Patterns. A LIKE pattern ending in the escape character raises on exactly the rows that match
-- up to it, and the view's filter may run on other tenants' rows: callers build patterns with
-- app.like_contains (every `\`, `%`, `_` escaped, so the pattern is well formed and cannot raise)
-- or, as /rest/v1 does, send only patterns that hold no backslash.
--
-- Full text (tsvector) is not used: every score below is a substring test (whole field, prefix,
-- word prefix, anywhere), which trigrams serve; stemming would find rows the ranking scores 0.

create function app.like_escape(term text) returns text
language sql immutable parallel safe
return replace(replace(replace(term, '\', '\\'), '%', '\%'), '_', '\_');

/** `%term%`, lower-cased, matching the term literally. */
create function app.like_contains(term text) returns text
language sql immutable parallel safe
return '%' || app.like_escape(lower(term)) || '%';

-- The search texts. Plain `||` over text (immutable, unlike concat_ws) so an index may hold them;
-- a null field adds an empty string. The index expressions below must stay exactly these calls.
create function app.contact_search_text(first_name text, last_name text, company text, email text, phone text)
returns text language sql immutable parallel safe
return lower(coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(company, '')
             || ' ' || coalesce(email, '') || ' ' || coalesce(phone, ''));

create function app.order_search_text(order_number text, customer_name text, customer_email text,
                                      customer_phone text, shipping_phone_number text)
returns text language sql immutable parallel safe
return lower(coalesce(order_number, '') || ' ' || coalesce(customer_name, '') || ' ' || coalesce(customer_email, '')
             || ' ' || coalesce(customer_phone, '') || ' ' || coalesce(shipping_phone_number, ''));

create function app.inventory_search_text(name text, sku text)
returns text language sql immutable parallel safe
return lower(coalesce(name, '') || ' ' || coalesce(sku, ''));

set local search_path = public, extensions;

create index contacts_search_trgm_idx on public.contacts
  using gin (app.contact_search_text(first_name, last_name, company, email, phone) gin_trgm_ops);
create index orders_search_trgm_idx on public.orders
  using gin (app.order_search_text(order_number, customer_name, customer_email, customer_phone,
                                   shipping_phone_number) gin_trgm_ops);
create index inventory_items_search_trgm_idx on public.inventory_items
  using gin (app.inventory_search_text(name, sku) gin_trgm_ops);

reset search_path;

-- The views (0015's contact_search keeps its columns; new ones go at the end, as a view may grow).
create or replace view app.contact_search as
  select c.organization_id, c.id, c.first_name, c.last_name, c.email, c.company,
         c.phone, c.created_at,
         app.contact_search_text(c.first_name, c.last_name, c.company, c.email, c.phone) as search_text
    from public.contacts c
   where c.organization_id = app.current_org_id() and app.can_read();

create view app.order_search as
  select o.organization_id, o.id, o.order_number, o.customer_name, o.customer_email, o.customer_phone,
         o.shipping_phone_number, o.created_at,
         app.order_search_text(o.order_number, o.customer_name, o.customer_email, o.customer_phone,
                               o.shipping_phone_number) as search_text
    from public.orders o
   where o.organization_id = app.current_org_id() and app.can_read();

create view app.inventory_item_search as
  select i.organization_id, i.id, i.name, i.sku, i.created_at,
         app.inventory_search_text(i.name, i.sku) as search_text
    from public.inventory_items i
   where i.organization_id = app.current_org_id() and app.can_read();

grant select on app.order_search, app.inventory_item_search to authenticated;

-- How well a field matches the (lower-cased) term: the whole field (100), its start (70), the start
-- of a word in it (55), anywhere (30); `bonus` lifts identifiers (email, order number, SKU) over
-- names by a point.
create function app.search_score(field text, term text, bonus int) returns int
language sql immutable parallel safe
return case
  when lower(field) = term then 100 + bonus
  when lower(field) like app.like_escape(term) || '%' then 70 + bonus
  when lower(field) like '% ' || app.like_escape(term) || '%' then 55 + bonus
  when lower(field) like '%' || app.like_escape(term) || '%' then 30 + bonus
  else 0 end;

-- A phone field against the digits of a query: the whole number (101) or a run of its digits (45).
create function app.search_phone_score(field text, digits text) returns int
language sql immutable parallel safe
return case
  when digits = '' then 0
  when field = '+' || digits then 101
  when field like '%' || digits || '%' then 45
  else 0 end;

/** The digits of a query that looks like a phone number (4 or more), else ''. */
create function app.search_digits(query text) returns text
language sql immutable parallel safe
return case when btrim(query) ~ '^[+0-9\s().-]{4,}$' and length(regexp_replace(query, '\D', '', 'g')) >= 4
            then regexp_replace(query, '\D', '', 'g') else '' end;

-- The best `lim` hits for `query` among the caller's contacts, orders and inventory items of the
-- kinds in `types`: at most `per_table` candidates of each kind come from its trigram index, plus
-- the rows whose identifier or item name is the whole query (their btree indexes), and only those
-- are scored. When a fragment is in more rows than `per_table` (a common fragment in a big
-- tenant), the other hits are the best of the first `per_table` the index gives: a sample, not
-- the newest; a query in fewer rows than that is ranked exactly.
-- Plain SQL, not security definer: the views restrict the rows; callers read the hits' records
-- from the tables under RLS.
create function app.search(query text, types text[], lim int, per_table int default 200)
returns table (type text, id uuid, score int, created_at timestamptz)
language sql stable
as $$
  select h.type, h.id, h.score, h.created_at from (
    select 'contact'::text as type, s.id, s.created_at,
           greatest(app.search_score(concat_ws(' ', s.first_name, s.last_name), lower(btrim(query)), 0),
                    app.search_score(s.last_name, lower(btrim(query)), 0),
                    app.search_score(s.company, lower(btrim(query)), 0),
                    app.search_score(s.email, lower(btrim(query)), 1),
                    app.search_phone_score(s.phone, app.search_digits(query))) as score
      from ((select * from app.contact_search s
             where 'contact' = any (types)
               and (s.search_text like app.like_contains(btrim(query))
                    or (app.search_digits(query) <> '' and s.search_text like '%' || app.search_digits(query) || '%'))
             limit per_table)
            union
            (select * from app.contact_search s
             where 'contact' = any (types)
               and (s.email = lower(btrim(query))
                    or (app.search_digits(query) <> '' and s.phone = '+' || app.search_digits(query))))) s
    union all
    select 'order', s.id, s.created_at,
           greatest(app.search_score(s.order_number, lower(btrim(query)), 1),
                    app.search_score(s.customer_name, lower(btrim(query)), 0),
                    app.search_score(s.customer_email, lower(btrim(query)), 1),
                    app.search_phone_score(s.customer_phone, app.search_digits(query)),
                    app.search_phone_score(s.shipping_phone_number, app.search_digits(query)))
      from ((select * from app.order_search s
             where 'order' = any (types)
               and (s.search_text like app.like_contains(btrim(query))
                    or (app.search_digits(query) <> '' and s.search_text like '%' || app.search_digits(query) || '%'))
             limit per_table)
            union
            (select * from app.order_search s
             where 'order' = any (types) and s.order_number in (btrim(query), upper(btrim(query))))) s
    union all
    select 'inventory_item', s.id, s.created_at,
           greatest(app.search_score(s.name, lower(btrim(query)), 0),
                    app.search_score(s.sku, lower(btrim(query)), 1))
      from ((select * from app.inventory_item_search s
             where 'inventory_item' = any (types)
               and s.search_text like app.like_contains(btrim(query))
             limit per_table)
            union
            (select * from app.inventory_item_search s
             where 'inventory_item' = any (types)
               and (lower(s.name) = lower(btrim(query)) or s.sku in (btrim(query), upper(btrim(query)))))) s
  ) h
  where h.score > 0
  order by h.score desc, h.created_at desc, h.id
  limit lim
$$;

grant execute on function app.search(text, text[], int, int) to authenticated;
