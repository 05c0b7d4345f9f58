-- A social post's link is a web address (issue 27): http:// or https://, nothing else. What this
-- file guarantees, whichever path writes (the social functions and MCP tools check the same rule
-- first, src/domain/social-posts.ts, and answer 400 naming it):
-- * social_posts.link is null or starts with http:// or https:// (any case) and holds no space or
--   control character. `javascript:`, `data:` and `vbscript:` links ran script or carried a page
--   where the dashboard shows the link, and are no link Meta can publish.
-- * Links written before this rule that break it are removed (set to null), on every post: they
--   were never a working link, and keeping them would keep the script. The post's updated_at
--   records the change; the count is reported as a notice. The lifecycle guard is paused for this
--   one statement only, as it refuses content changes to published posts by design.

alter table public.social_posts disable trigger social_posts_guard;

do $$
declare
  cleared integer;
begin
  update public.social_posts set link = null
   where link is not null and link !~* '^https?://[^[:space:][:cntrl:]]+$';
  get diagnostics cleared = row_count;
  if cleared > 0 then
    raise notice 'social_posts: % link(s) that were not http(s) addresses removed', cleared;
  end if;
end $$;

alter table public.social_posts enable trigger social_posts_guard;

alter table public.social_posts
  add constraint social_posts_link_web check (link ~* '^https?://[^[:space:][:cntrl:]]+$');
