// The bare baseline bench/social-publish.ts holds the publisher against, in a process of its own:
// node-postgres and fetch, no framework, no queue library. CONCURRENCY loops each take a due post
// (one statement: the oldest scheduled post of the organization that is due, `for update skip
// locked`, moved to `publishing`, so a post is taken once), call the fake Graph API as the
// publisher does for a text post (`POST /{page-id}/feed`, then `GET /{post-id}?fields=permalink_url`)
// and record the answer (the post `published` with Meta's id and permalink, its pg-boss job
// completed, in one statement). With nothing due a loop waits POLL_MS, as an idle worker polls.
// Not done here, and done by the service: decrypting the account's token (it is given), checking
// the account and its health, the claim's deadline row, the metrics job.
import pg from 'pg';

const env = process.env;
const info = JSON.parse(env.BENCH_PUBLISH_INFO ?? '{}') as {
  org: string;
  pageId: string;
  token: string;
  concurrency: number;
  pollMs: number;
};
const root = `${env.META_GRAPH_URL}/v26.0`;
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: info.concurrency });

const TAKE = `update public.social_posts p set status = 'publishing'
  where (p.organization_id, p.id) = (
    select organization_id, id from public.social_posts
     where organization_id = $1 and status = 'scheduled' and scheduled_at <= now()
     order by scheduled_at limit 1 for update skip locked)
  returning p.id, p.message, floor(extract(epoch from p.scheduled_at) * 1000)::bigint::text as at`;
const RECORD = `with j as (update pgboss.job set state = 'completed', completed_on = now()
                 where name = 'publish-social-post' and id = app.job_key_id('publish-social-post', $1::text || '/' || $2::text || '/' || $5::text))
  update public.social_posts set status = 'published', published_at = now(), provider_post_id = $3, permalink = $4
   where organization_id = $1::uuid and id = $2::uuid and status = 'publishing'`;

async function graph(method: string, path: string, body?: object) {
  const res = await fetch(`${root}/${path}`, {
    method,
    headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status !== 200) throw new Error(`fake: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

let stopping = false;
async function loop() {
  while (!stopping) {
    const { rows } = await pool.query({ name: 'take', text: TAKE, values: [info.org] });
    const post = rows[0] as { id: string; message: string; at: string } | undefined;
    if (!post) {
      await new Promise((r) => setTimeout(r, info.pollMs));
      continue;
    }
    const made = await graph('POST', `${info.pageId}/feed`, { message: post.message });
    const link = await graph('GET', `${encodeURIComponent(made.id as string)}?fields=permalink_url`);
    await pool.query({
      name: 'record',
      text: RECORD,
      values: [info.org, post.id, made.id, link.permalink_url, post.at],
    });
  }
}

const loops = Array.from({ length: info.concurrency }, loop);
process.once('SIGTERM', async () => {
  stopping = true;
  await Promise.allSettled(loops);
  await pool.end();
  process.exit(0);
});
process.send?.({ pid: process.pid });
