-- The social calendar (issue 14, docs/social.md): posts and their media, tenant tables under
-- row-level security, read at /rest/v1. What this file guarantees, whichever path writes:
-- * The lifecycle of decisions.md "Social posts": draft ⇄ scheduled (cancelling clears
--   scheduled_at), scheduled → publishing → published | failed. Callers (role authenticated) may
--   only create drafts and scheduled posts and move between those two; the publisher (the service
--   path) takes them further. Content (platform, account, message, link, schedule, media) changes
--   only while a post is draft or scheduled, and only those can be deleted by callers: anything
--   else is SV409 invalid_transition with from, to and the allowed states.
-- * A scheduled post has a time in the future, at most a year ahead; a draft has none.
-- * Callers write posts only through the service's social functions and tools, which download
--   media and check accounts first: they mark their transaction (svc.social_write); a plain
--   /rest/v1 write is refused with 403 and where to go instead.

create table public.social_posts (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  platform text not null check (platform in ('twitter', 'linkedin', 'instagram', 'facebook')),
  account_id uuid,
  status text not null default 'draft'
    check (status in ('draft', 'scheduled', 'publishing', 'published', 'failed')),
  message text check (length(message) <= 63206),
  link text check (length(link) <= 2048),
  scheduled_at timestamptz,
  published_at timestamptz,
  provider_post_id text check (length(provider_post_id) <= 200),
  permalink text check (length(permalink) <= 2048),
  error jsonb,
  meta_payload jsonb,
  created_by text check (length(created_by) <= 100),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- Where the post sits on the calendar: when it went out, else when it is due.
  calendar_at timestamptz generated always as (coalesce(published_at, scheduled_at)) stored,
  primary key (organization_id, id),
  foreign key (organization_id, account_id) references app.connected_accounts (organization_id, id),
  check (status <> 'scheduled' or scheduled_at is not null),
  check (status <> 'draft' or scheduled_at is null)
);
create index social_posts_list_idx on public.social_posts (organization_id, created_at desc, id desc);
create index social_posts_calendar_idx on public.social_posts (organization_id, calendar_at, id)
  where calendar_at is not null;
create index social_posts_status_idx on public.social_posts (organization_id, status, created_at desc);
create trigger social_posts_touch before insert or update on public.social_posts
  for each row execute function app.touch_timestamps();

create table public.social_post_media (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  post_id uuid not null,
  position integer not null check (position between 1 and 10),
  storage_path text not null check (length(storage_path) between 1 and 1024),
  mime_type text not null check (length(mime_type) <= 100),
  bytes bigint not null check (bytes > 0),
  width integer check (width > 0),
  height integer check (height > 0),
  source_url text check (length(source_url) <= 2048),
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, post_id, position),
  foreign key (organization_id, post_id) references public.social_posts (organization_id, id) on delete cascade
);

create table app.social_post_transitions (
  from_status text not null,
  to_status text not null,
  primary key (from_status, to_status)
);
insert into app.social_post_transitions values
  ('draft', 'scheduled'), ('scheduled', 'draft'), ('scheduled', 'publishing'),
  ('publishing', 'published'), ('publishing', 'failed');

create or replace function app.social_invalid_transition(from_status text, to_status text, allowed text[])
returns void language plpgsql
as $$
begin
  raise exception 'A % post cannot become %', from_status, to_status
    using errcode = 'SV409', hint = 'invalid_transition',
          detail = json_build_object('from', from_status, 'to', to_status, 'allowed', allowed)::text;
end $$;

-- Callers are people and agents (role authenticated); the service path is the publisher and the
-- retention purge.
create or replace function app.guard_social_post() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  caller boolean := current_setting('role', true) = 'authenticated';
  editable text[] := array['draft', 'scheduled'];
  allowed text[];
begin
  if caller and coalesce(current_setting('svc.social_write', true), '') <> 'on' then
    raise exception 'Social posts are written through /functions/v1/social-posts or the MCP social tools'
      using errcode = 'SV403', hint = 'forbidden', detail = '{}';
  end if;
  if tg_op = 'DELETE' then
    if caller and not old.status = any (editable) then
      perform app.social_invalid_transition(old.status, 'deleted', editable);
    end if;
    return old;
  end if;
  if tg_op = 'INSERT' then
    if caller and not new.status = any (editable) then
      perform app.social_invalid_transition('new', new.status, editable);
    end if;
  elsif new.status is distinct from old.status then
    select coalesce(array_agg(t.to_status order by t.to_status), '{}') into allowed
      from app.social_post_transitions t
     where t.from_status = old.status and (not caller or t.to_status = any (editable));
    if not new.status = any (allowed) then
      perform app.social_invalid_transition(old.status, new.status, allowed);
    end if;
  elsif not old.status = any (editable)
        and (caller or (new.platform, new.account_id, new.message, new.link, new.scheduled_at)
                       is distinct from (old.platform, old.account_id, old.message, old.link, old.scheduled_at)) then
    perform app.social_invalid_transition(old.status, old.status, editable);
  end if;
  -- Back to draft (a cancel): the post leaves the calendar.
  if new.status = 'draft' then
    new.scheduled_at := null;
  end if;
  if new.status = 'scheduled' and (tg_op = 'INSERT' or old.status <> 'scheduled'
                                   or new.scheduled_at is distinct from old.scheduled_at) then
    if new.scheduled_at is null or new.scheduled_at <= now() or new.scheduled_at > now() + interval '365 days' then
      raise exception 'scheduled_at must be in the future and at most 365 days ahead'
        using errcode = 'SV400', hint = 'validation_error',
              detail = json_build_object('issues', json_build_array(json_build_object(
                'path', 'scheduled_at', 'message', 'Must be in the future and at most 365 days ahead')))::text;
    end if;
  end if;
  return new;
end $$;
create trigger social_posts_guard before insert or update or delete on public.social_posts
  for each row execute function app.guard_social_post();

-- Media belong to the post's content: they change only while it is draft or scheduled.
create or replace function app.guard_social_post_media() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  row_ public.social_post_media := case when tg_op = 'DELETE' then old else new end;
  post_status text;
begin
  if current_setting('role', true) is distinct from 'authenticated' then
    return row_;
  end if;
  if coalesce(current_setting('svc.social_write', true), '') <> 'on' then
    raise exception 'Social posts are written through /functions/v1/social-posts or the MCP social tools'
      using errcode = 'SV403', hint = 'forbidden', detail = '{}';
  end if;
  select p.status into post_status from public.social_posts p
   where p.organization_id = row_.organization_id and p.id = row_.post_id;
  -- A missing post is one being deleted: its media go with it.
  if post_status is not null and post_status not in ('draft', 'scheduled') then
    perform app.social_invalid_transition(post_status, post_status, array['draft', 'scheduled']);
  end if;
  return row_;
end $$;
create trigger social_post_media_guard before insert or update or delete on public.social_post_media
  for each row execute function app.guard_social_post_media();

select app.apply_tenant_policies('public.social_posts', true);
select app.apply_tenant_policies('public.social_post_media', true);

-- Deleting a post is part of writing the calendar (spec 4.6: the write scope suffices), unlike
-- deleting contacts or orders, which takes admin.
drop policy tenant_delete on public.social_posts;
create policy tenant_delete on public.social_posts for delete to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.can_write()));
drop policy tenant_delete on public.social_post_media;
create policy tenant_delete on public.social_post_media for delete to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.can_write()));
