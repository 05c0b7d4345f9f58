-- Substring search that a tenant's own request can serve from the trigram indexes of 0012.
--
-- Under row-level security the planner may not make a clause that is not leakproof (`ilike` is
-- not: docs/data-model.md, "Substring search") an index condition, so a tenant's `ilike '%…%'`
-- scanned the whole tenant. This view is read with the owner's rights, so a query on it alone is
-- planned without the policies and may use the indexes; /rest/v1 asks it for the ids of at most
-- 1,001 matching contacts (src/rest/read.ts) and then reads those ids from public.contacts, where
-- RLS decides what the caller sees, as for any read.
--
-- What it guarantees on its own: only the caller's organization, and only when the caller may
-- read (the same settings the policies read), so even a query on the view alone shows nothing of
-- another tenant. Only the searchable text columns and the keys are in it.
-- Who may use it: the service's own query builder, with patterns that hold no backslash. A LIKE
-- pattern ending in the escape character raises an error on exactly the rows that match up to
-- it, and the planner may evaluate the pattern on rows of other tenants before the view's own
-- organization filter; without a backslash, `like`/`ilike` cannot raise, so nothing leaks.

create view app.contact_search as
  select c.organization_id, c.id, c.first_name, c.last_name, c.email, c.company
    from public.contacts c
   where c.organization_id = app.current_org_id() and app.can_read();

grant select on app.contact_search to authenticated;
