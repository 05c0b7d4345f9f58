-- The publisher's bookkeeping and the posts' analytics (issue 14, docs/social.md). What this file
-- guarantees:
-- * app.social_publications: one row per post the publisher has taken (scheduled → publishing),
--   holding which schedule it is for, which run holds it (claimed_until: one run calls Meta at a
--   time) and what Meta has already made for it (progress: unpublished photos, Instagram
--   containers, and `started_at` before the call that makes the post visible), so a retry after a
--   crash or a lost answer looks before it posts. Machinery: outside the exposed schema, no tenant
--   role may read or write it; it goes with its post.
-- * public.social_post_metrics: the Insights the metrics job pulled, one row per metric and pull
--   (a time series). Tenants read their own through /rest/v1 under row-level security; only the
--   service writes it.

create table app.social_publications (
  organization_id uuid not null,
  post_id uuid not null,
  -- The schedule this publication is for: a job carrying another time is an old one.
  scheduled_at timestamptz not null,
  claimed_until timestamptz,
  progress jsonb not null default '{}',
  runs integer not null default 0 check (runs >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, post_id),
  foreign key (organization_id, post_id) references public.social_posts (organization_id, id) on delete cascade
);
create trigger social_publications_touch before insert or update on app.social_publications
  for each row execute function app.touch_timestamps();

create table public.social_post_metrics (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  post_id uuid not null,
  -- Meta's metric name (post_media_view, views, reach, …); a breakdown as name.key (post_reactions_by_type_total.like).
  metric text not null check (length(metric) between 1 and 200),
  value numeric not null,
  fetched_at timestamptz not null default now(),
  primary key (organization_id, post_id, metric, fetched_at),
  foreign key (organization_id, post_id) references public.social_posts (organization_id, id) on delete cascade
);

select app.apply_tenant_policies('public.social_post_metrics');
-- Read-only to the API roles: the metrics job (service path) is the only writer.
revoke insert, update, delete on public.social_post_metrics from authenticated;
