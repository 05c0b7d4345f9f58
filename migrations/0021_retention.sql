-- The retention purge (issue 13, docs/retention.md). What this file guarantees:
-- * app.purge_expired(kind, at, batch) deletes at most `batch` expired rows of one kind per call
--   and says how many rows of each table went (cascaded lines and status events included). The
--   caller (src/domain/retention.ts) calls it again, each call its own transaction, until a call
--   deletes fewer than `batch`: no statement holds more than one batch of row locks, and no table
--   lock beyond the ROW EXCLUSIVE every delete takes.
-- * "Expired" is measured per organization against its plan's data_retention_days, as of `at`
--   (the service's clock), in one place: app.retention below.
-- * Rows a transaction holds are skipped (`for update skip locked`), so the purge never waits on a
--   request or a job, and two purges at once never delete the same row twice; what was skipped
--   goes on the next run.
-- * Kept whatever their age: contacts, inventory (items, warehouses), connected accounts, and
--   orders still in flight (pending, confirmed, processing, shipped). An order is purged only
--   delivered, cancelled or returned, so deleting it never moves stock: orders_release_on_delete
--   (0007) gives stock back only for confirmed and processing orders, which are never purged.
-- * Monthly counters (orders, outbound messages in app.counters) are not touched: a purged row
--   does not give its slot back.

-- Each organization's retention, from its plan.
create view app.retention as
  select o.id as organization_id, make_interval(days => p.data_retention_days) as keep
    from public.organizations o join public.plans p on p.slug = o.plan;
revoke all on app.retention from public, anon, authenticated;

-- Messages are purged per organization by age; the conversation index leads with the
-- conversation, so without this every batch would read all of an organization's messages.
create index messages_created_idx on public.messages (organization_id, created_at);

create or replace function app.purge_expired(kind text, at timestamptz, batch integer)
returns table (table_name text, deleted bigint)
language plpgsql volatile set search_path = ''
as $$
declare
  n bigint;
  lines bigint;
  events bigint;
  deliveries uuid[];
  orgs uuid[];
  ids uuid[];
  shortest interval := (select make_interval(days => min(p.data_retention_days)) from public.plans p);
begin
  case kind
  -- Messages by when they were stored, also inside conversations that are still active.
  when 'messages' then
    with doomed as (
      select m.organization_id, m.id from app.retention r
       cross join lateral (
         select x.organization_id, x.id from public.messages x
          where x.organization_id = r.organization_id and x.created_at < at - r.keep
          limit batch for update of x skip locked) m
       limit batch),
    gone as (
      delete from public.messages t using doomed d where t.organization_id = d.organization_id and t.id = d.id
      returning 1)
    select count(*) into n from gone;
    return query select 'messages', n;

  -- A conversation whose newest activity is older than the retention (its messages went first;
  -- any left cascade). Locked rows are skipped: a message being added to one holds its key.
  when 'conversations' then
    with doomed as (
      select c.organization_id, c.id from app.retention r
       cross join lateral (
         select x.organization_id, x.id from public.conversations x
          where x.organization_id = r.organization_id and x.last_message_at < at - r.keep
          limit batch for update of x skip locked) c
       limit batch),
    gone as (
      delete from public.conversations t using doomed d where t.organization_id = d.organization_id and t.id = d.id
      returning 1)
    select count(*) into n from gone;
    return query select 'conversations', n;

  -- Finished orders (delivered, cancelled, returned) whose last change is older than the
  -- retention, with their lines and status history (cascade). created_at <= updated_at, so the
  -- created_at bound only lets orders_status_idx narrow the scan.
  when 'orders' then
    with doomed as (
      select o.organization_id, o.id from app.retention r
       cross join lateral (
         select x.organization_id, x.id from public.orders x
          where x.organization_id = r.organization_id
            and x.status in ('delivered', 'cancelled', 'returned')
            and x.created_at < at - r.keep and x.updated_at < at - r.keep
          limit batch for update of x skip locked) o
       limit batch)
    select array_agg(d.organization_id), array_agg(d.id) into orgs, ids from doomed d;
    -- Counted before the delete so the report names what the cascade takes with the orders.
    select count(*) into lines from public.order_items i
      join unnest(orgs, ids) d (organization_id, id) on i.organization_id = d.organization_id and i.order_id = d.id;
    select count(*) into events from public.order_status_events e
      join unnest(orgs, ids) d (organization_id, id) on e.organization_id = d.organization_id and e.order_id = d.id;
    delete from public.orders t using unnest(orgs, ids) d (organization_id, id)
     where t.organization_id = d.organization_id and t.id = d.id;
    get diagnostics n = row_count;
    return query values ('orders', n), ('order_items', lines), ('order_status_events', events);

  -- Webhook events by when they arrived, whatever their status (processing retries for at most
  -- 7 days; the shortest retention is longer). A delivery left without events goes with them: its
  -- raw body may hold several tenants' entries, and none of them is kept any more.
  when 'webhook_events' then
    with doomed as (
      select e.organization_id, e.id from app.retention r
       cross join lateral (
         select x.organization_id, x.id from app.webhook_events x
          where x.organization_id = r.organization_id and x.received_at < at - r.keep
          limit batch for update of x skip locked) e
       limit batch),
    gone as (
      delete from app.webhook_events t using doomed d where t.organization_id = d.organization_id and t.id = d.id
      returning t.delivery)
    select count(*), array_agg(distinct g.delivery) into n, deliveries from gone g;
    return query select 'webhook_events', n;
    delete from app.webhook_deliveries w
     where w.id = any (deliveries)
       and not exists (select 1 from app.webhook_events e where e.delivery = w.id);
    get diagnostics n = row_count;
    return query select 'webhook_deliveries', n;

  -- Deliveries without events left by other routes (an organization deleted), once older than
  -- the shortest retention: no tenant's rule keeps them.
  when 'webhook_deliveries' then
    with doomed as (
      select w.id from app.webhook_deliveries w
       where w.received_at < at - shortest
         and not exists (select 1 from app.webhook_events e where e.delivery = w.id)
       limit batch for update of w skip locked),
    gone as (delete from app.webhook_deliveries t using doomed d where t.id = d.id returning 1)
    select count(*) into n from gone;
    return query select 'webhook_deliveries', n;

  -- Agent sign-in attempts; those naming no organization (an unknown key) after the shortest
  -- retention.
  when 'agent_auth_attempts' then
    with doomed as (
      select a.id from app.retention r
       cross join lateral (
         select x.id from public.agent_auth_attempts x
          where x.organization_id = r.organization_id and x.created_at < at - r.keep
          limit batch for update of x skip locked) a
       limit batch),
    gone as (delete from public.agent_auth_attempts t using doomed d where t.id = d.id returning 1)
    select count(*) into n from gone;
    -- The rest of the batch, if any, on attempts that named no organization.
    with doomed as (
      select x.id from public.agent_auth_attempts x
       where x.organization_id is null and x.created_at < at - shortest
       limit batch - n for update of x skip locked),
    gone as (delete from public.agent_auth_attempts t using doomed d where t.id = d.id returning 1)
    select n + count(*) into n from gone;
    return query select 'agent_auth_attempts', n;

  -- Social posts (0022) are not purged yet: their media files live in the storage bucket, which
  -- this function cannot reach (docs/social.md, "Retention").
  else
    raise exception 'unknown purge kind %', kind using errcode = '22023';
  end case;
end $$;
revoke all on function app.purge_expired(text, timestamptz, integer) from public;
