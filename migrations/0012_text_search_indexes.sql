-- Trigram indexes for substring search (`ilike '%…%'`) on the contact fields people filter by:
-- first_name, last_name, email, company (/rest/v1 `ilike` filters). A btree cannot serve a pattern
-- with a leading wildcard; a trigram GIN index can, for patterns of 3 characters or more.
--
-- What they serve, measured at 100,000 contacts in one tenant (docs/performance.md, "Big tenants"):
-- * Reads that bypass row-level security (service_role): a page of matches goes from a scan of
--   the tenant (≈ 80–150 ms of execution) to a bitmap scan of the index (≈ 0.04–1 ms).
-- * Not yet the tenant's own requests: under RLS the policy's quals must run before any clause
--   that is not leakproof, so the planner may not make such a clause an index condition, and
--   `~~*` (texticlike) is not leakproof: it stays a filter after the policy's tenant scan. Marking it leakproof needs a
--   superuser and is not safe: a pattern ending in the escape character raises only when a row
--   matches up to it, so the error would reveal other tenants' rows. A tenant search that uses
--   these indexes has to pick candidate rows where RLS does not apply and let RLS recheck them;
--   see docs/data-model.md.
--
-- Orders (order_number, customer_name, customer_email) and inventory items (name, sku) are not
-- indexed: nothing measured them at 100,000 rows yet, and each GIN index costs every write.
--
-- pg_trgm is a trusted extension (PostgreSQL 13+): the database owner may create it without being
-- a superuser, provided the server has the contrib package. It lives in its own schema so its
-- functions (similarity, show_trgm, …) never appear among what `public` exposes.

create schema if not exists extensions;
create extension if not exists pg_trgm with schema extensions;

-- A deployment may already have pg_trgm elsewhere (public, by a DBA): find the operator class in
-- whichever schema holds it, for this transaction only.
set local search_path = public, extensions;

create index contacts_first_name_trgm_idx on public.contacts using gin (first_name gin_trgm_ops);
create index contacts_last_name_trgm_idx on public.contacts using gin (last_name gin_trgm_ops);
create index contacts_email_trgm_idx on public.contacts using gin (email gin_trgm_ops);
create index contacts_company_trgm_idx on public.contacts using gin (company gin_trgm_ops);
