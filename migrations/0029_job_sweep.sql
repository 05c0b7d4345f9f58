-- What the worker's sweep needs (docs/jobs.md "The sweep"). What this file guarantees:
-- * app.job_key_id(name, key) is the id of the job of that name enqueued with that key: the same
--   UUID keyedId computes in src/platform/queue/pg-boss.ts (pinned by
--   test/platform/queue-sweep.test.ts). Outbound messages, webhook events and scheduled posts are
--   enqueued with a key derived from their row, so one statement finds a row's job by primary key
--   beside the row itself, and a second enqueue for the row can never make a second job.
-- * Finding unfinished work costs what there is of it, not the tables: partial indexes over the
--   outbound messages still queued and the posts still scheduled or publishing, oldest first
--   (webhook events have webhook_events_status_idx from 0018).

create function app.job_key_id(job_name text, job_key text) returns uuid
language sql immutable strict parallel safe set search_path = ''
as $$
  -- SHA-256 of name, a zero byte and key; its first 16 bytes, marked as a version 8 (custom) UUID.
  select encode(substring(set_byte(set_byte(h, 6, (get_byte(h, 6) & 15) | 128),
                                   8, (get_byte(h, 8) & 63) | 128) from 1 for 16), 'hex')::uuid
    from (select sha256(convert_to(job_name, 'UTF8') || '\x00'::bytea || convert_to(job_key, 'UTF8')) as h) k
$$;
revoke all on function app.job_key_id(text, text) from public;

create index messages_queued_idx on public.messages (created_at) where status = 'queued';
create index social_posts_unpublished_idx on public.social_posts (scheduled_at)
  where status in ('scheduled', 'publishing');
