// The content calendar at size: an organization with 10,000 posts over a year, one month of them
// asked for, grouped by day in a time zone (contentCalendar, the path of svc_get_content_calendar
// and /functions/v1/content-calendar, under row-level security), beside a plain indexed select of
// the same rows as the owner, on both engines; and, on PostgreSQL, publishes per second through
// one and two worker processes beside a bare node + pg publisher (bench/social-publish.ts).
// Rounds alternate and the figures are medians. A benchmark, not a test: it prints figures and
// never fails on them. BENCH_PARTS (calendar,publish).
//
//   npm run bench:social            (BENCH_DATABASE_URL: the PostgreSQL server; default root@127.0.0.1/test)
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createPlanCache } from '../src/domain/plan-cache.ts';
import { contentCalendar, type SocialDeps } from '../src/domain/social-posts.ts';
import type { Database, Principal } from '../src/platform/db/database.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { openPglite } from '../src/platform/db/pglite.ts';
import { withScratchDatabase } from './scratch-database.ts';
import { publishRates } from './social-publish.ts';

const POSTS = 10_000;
const ROUNDS = 5;
const PER_ROUND = 40;
const DAY = 86_400_000;

type Seed = { orgId: string; principal: Principal; from: string; to: string };

async function seed(db: Database): Promise<Seed> {
  const tag = randomBytes(4).toString('hex');
  const [user] = await db.query<{ id: string }>(
    `insert into auth.users (email, encrypted_password) values ($1, 'x') returning id`,
    [`bench-${tag}@example.test`],
  );
  const [org] = await db.query<{ id: string }>(
    "insert into public.organizations (name, plan) values ($1, 'scale') returning id",
    [`Calendar ${tag}`],
  );
  const orgId = org?.id as string;
  await db.query(
    `insert into public.organization_members (organization_id, user_id, role) values ($1, $2, 'owner')`,
    [orgId, user?.id],
  );
  const [account] = await db.query<{ id: string }>(
    `insert into app.connected_accounts (organization_id, provider, external_id, access_token_encrypted)
     values ($1, 'facebook', $2, 'v1:bench:unused') returning id`,
    [orgId, `page-${tag}`],
  );
  // Half published over the past half year, half scheduled over the next; a post every ~30 min.
  await db.query(
    `insert into public.social_posts (organization_id, platform, account_id, status, message, scheduled_at, published_at)
     select $1, 'facebook', $2,
            case when g % 2 = 0 then 'published' else 'scheduled' end, 'Post ' || g,
            case when g % 2 = 1 then now() + make_interval(mins => g * 30) end,
            case when g % 2 = 0 then now() - make_interval(mins => g * 30) end
       from generate_series(1, $3::int) g`,
    [orgId, account?.id, POSTS],
  );
  await db.query('analyze public.social_posts');
  const claims = {
    sub: user?.id,
    role: 'authenticated',
    app_metadata: { organization_id: orgId, org_id: orgId },
  };
  const now = Date.now();
  return {
    orgId,
    principal: { kind: 'user', userId: user?.id as string, claims },
    from: new Date(now + 30 * DAY).toISOString(),
    to: new Date(now + 61 * DAY).toISOString(),
  };
}

async function time(fn: () => Promise<number>, expected: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < PER_ROUND; i++) {
    const t = performance.now();
    const rows = await fn();
    out.push((performance.now() - t) * 1000);
    if (rows !== expected) throw new Error(`expected ${expected} posts, got ${rows}`);
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function bench(engine: string, db: Database): Promise<string> {
  await migrate(db);
  const s = await seed(db);
  const deps = { db, plans: createPlanCache(db) } as unknown as SocialDeps;
  const calendar = async () => {
    const r = await contentCalendar(deps, s.principal, { from: s.from, to: s.to, timezone: 'Europe/Lisbon' });
    return r.days.reduce((n, d) => n + d.posts.length, 0);
  };
  const plain = async () =>
    (
      await db.query(
        `select * from public.social_posts where organization_id = $1
            and calendar_at >= $2::timestamptz and calendar_at < $3::timestamptz order by calendar_at, id`,
        [s.orgId, s.from, s.to],
      )
    ).length;
  const expected = await plain();
  await time(calendar, expected);
  await time(plain, expected);
  const acc = { calendar: [] as number[], plain: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    acc.calendar.push(...(await time(calendar, expected)));
    acc.plain.push(...(await time(plain, expected)));
  }
  const [c, p] = [median(acc.calendar), median(acc.plain)];
  return `social ${engine}: calendar of ${expected} of ${POSTS} posts, grouped by day: median ${(c / 1000).toFixed(2)} ms; plain indexed select of the same rows: ${(p / 1000).toFixed(2)} ms (${(c / p).toFixed(2)}×)`;
}

const PARTS = (process.env.BENCH_PARTS ?? 'calendar,publish').split(',');
const lines: string[] = [];
if (PARTS.includes('calendar')) {
  const lite = await openPglite(undefined);
  try {
    lines.push(await bench('pglite', lite));
  } finally {
    await lite.close();
  }
  const pgLine = await withScratchDatabase('social', async (url) => {
    const db = openPostgres(url, 4);
    try {
      return await bench('postgres', db);
    } finally {
      await db.close();
    }
  });
  if (pgLine) lines.push(pgLine);
}
if (PARTS.includes('publish')) {
  const pgPublish = await withScratchDatabase('social_publish', publishRates);
  if (pgPublish) lines.push(...pgPublish);
}
for (const l of lines) console.log(l);
