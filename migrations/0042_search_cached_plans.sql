-- svc_search with its plan kept (issue 28). app.search (0037) is inlined into the caller's
-- statement and planned on every call: 2–3 ms of planning for about 1 ms of execution on a rare
-- fragment at 100,000 rows. Here the same search runs as PL/pgSQL statements whose generic plans
-- are cached per connection, so a call only executes. Same candidates, same scores, same order:
-- app.search stays the one definition of what matches (test/domain/search-cached.test.ts holds
-- the two to the same answers).
--
-- A generic plan does not know the pattern, so it must never depend on it being selective in a
-- way that a common one is not:
-- - the digits arm exists only in the statement for phone-like queries: in a generic plan a
--   `like '%' || '' || '%'` arm reads the whole trigram index (130–500 ms);
-- - terms under three characters have no trigram to look up; they keep app.search, planned with
--   its values (EXECUTE), which reads the tenant newest first and stops early;
-- - the score patterns are made once per call (app.search_score_of), not per candidate row as an
--   unfolded app.search_score would in a generic plan.

-- app.search_score with its three patterns given: prefix, word prefix, anywhere.
create function app.search_score_of(field text, term text, prefix text, word text, anywhere text, bonus int)
returns int
language sql immutable parallel safe
return case
  when lower(field) = term then 100 + bonus
  when lower(field) like prefix then 70 + bonus
  when lower(field) like word then 55 + bonus
  when lower(field) like anywhere then 30 + bonus
  else 0 end;

create function app.search_cached(query text, types text[], lim int, per_table int default 200)
returns table (type text, id uuid, score int, created_at timestamptz)
language plpgsql stable
-- At most `lim` rows: the callers' joins then probe primary keys (the default estimate of a
-- PL/pgSQL set-returning function, 1,000 rows, made them hash-join whole tables: 600 ms).
rows 10
set plan_cache_mode = force_generic_plan
as $$
declare
  term text := lower(btrim(query));
  raw text := btrim(query);
  prefix text := app.like_escape(lower(btrim(query))) || '%';
  word text := '% ' || app.like_escape(lower(btrim(query))) || '%';
  anywhere text := app.like_contains(btrim(query));
  digits text := app.search_digits(query);
begin
  if length(raw) < 4 then
    return query execute 'select * from app.search($1, $2, $3, $4)' using query, types, lim, per_table;
    return;
  end if;
  if digits = '' then
    return query
    select h.type, h.id, h.score, h.created_at from (
      select 'contact'::text as type, s.id, s.created_at,
             greatest(app.search_score_of(concat_ws(' ', s.first_name, s.last_name), term, prefix, word, anywhere, 0),
                      app.search_score_of(s.last_name, term, prefix, word, anywhere, 0),
                      app.search_score_of(s.company, term, prefix, word, anywhere, 0),
                      app.search_score_of(s.email, term, prefix, word, anywhere, 1)) as score
        from ((select * from app.contact_search s
               where 'contact' = any (types) and s.search_text like anywhere
               limit per_table)
              union
              (select * from app.contact_search s
               where 'contact' = any (types) and s.email = term)) s
      union all
      select 'order', s.id, s.created_at,
             greatest(app.search_score_of(s.order_number, term, prefix, word, anywhere, 1),
                      app.search_score_of(s.customer_name, term, prefix, word, anywhere, 0),
                      app.search_score_of(s.customer_email, term, prefix, word, anywhere, 1))
        from ((select * from app.order_search s
               where 'order' = any (types) and s.search_text like anywhere
               limit per_table)
              union
              (select * from app.order_search s
               where 'order' = any (types) and s.order_number in (raw, upper(raw)))) s
      union all
      select 'inventory_item', s.id, s.created_at,
             greatest(app.search_score_of(s.name, term, prefix, word, anywhere, 0),
                      app.search_score_of(s.sku, term, prefix, word, anywhere, 1))
        from ((select * from app.inventory_item_search s
               where 'inventory_item' = any (types) and s.search_text like anywhere
               limit per_table)
              union
              (select * from app.inventory_item_search s
               where 'inventory_item' = any (types) and (lower(s.name) = term or s.sku in (raw, upper(raw))))) s
    ) h
    where h.score > 0
    order by h.score desc, h.created_at desc, h.id
    limit lim;
  else
    return query
    select h.type, h.id, h.score, h.created_at from (
      select 'contact'::text as type, s.id, s.created_at,
             greatest(app.search_score_of(concat_ws(' ', s.first_name, s.last_name), term, prefix, word, anywhere, 0),
                      app.search_score_of(s.last_name, term, prefix, word, anywhere, 0),
                      app.search_score_of(s.company, term, prefix, word, anywhere, 0),
                      app.search_score_of(s.email, term, prefix, word, anywhere, 1),
                      app.search_phone_score(s.phone, digits)) as score
        from ((select * from app.contact_search s
               where 'contact' = any (types)
                 and (s.search_text like anywhere or s.search_text like '%' || digits || '%')
               limit per_table)
              union
              (select * from app.contact_search s
               where 'contact' = any (types) and (s.email = term or s.phone = '+' || digits))) s
      union all
      select 'order', s.id, s.created_at,
             greatest(app.search_score_of(s.order_number, term, prefix, word, anywhere, 1),
                      app.search_score_of(s.customer_name, term, prefix, word, anywhere, 0),
                      app.search_score_of(s.customer_email, term, prefix, word, anywhere, 1),
                      app.search_phone_score(s.customer_phone, digits),
                      app.search_phone_score(s.shipping_phone_number, digits))
        from ((select * from app.order_search s
               where 'order' = any (types)
                 and (s.search_text like anywhere or s.search_text like '%' || digits || '%')
               limit per_table)
              union
              (select * from app.order_search s
               where 'order' = any (types) and s.order_number in (raw, upper(raw)))) s
      union all
      select 'inventory_item', s.id, s.created_at,
             greatest(app.search_score_of(s.name, term, prefix, word, anywhere, 0),
                      app.search_score_of(s.sku, term, prefix, word, anywhere, 1))
        from ((select * from app.inventory_item_search s
               where 'inventory_item' = any (types) and s.search_text like anywhere
               limit per_table)
              union
              (select * from app.inventory_item_search s
               where 'inventory_item' = any (types) and (lower(s.name) = term or s.sku in (raw, upper(raw))))) s
    ) h
    where h.score > 0
    order by h.score desc, h.created_at desc, h.id
    limit lim;
  end if;
end
$$;

grant execute on function app.search_cached(text, text[], int, int) to authenticated;
