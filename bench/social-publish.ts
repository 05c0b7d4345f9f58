// Publishes per second on PostgreSQL: the publisher (`svc worker`, one process and then two, each
// WORKER_CONCURRENCY 4 and its own pool; bench/social-worker.ts) beside a bare node + pg loop that
// does the same durable work (bench/social-publish-baseline.ts: take a due post, publish it on the
// fake Graph API, record the answer), with the same concurrency and poll interval, and the same
// POSTs straight to the fake. The fake runs in this process, the same for all.
//
// A round of one kind: start its processes and wait until they run; schedule POSTS text posts on a
// Facebook Page as the social functions do (row and publisher job in one transaction) due LEAD_MS
// later; time from the moment they are due until every one is `published`, so a figure includes
// up to one idle poll (WORKER_POLL_MS 500) and up to one 100 ms look of ours (slow enough that
// its own statements stay a small part of PostgreSQL's CPU), not the processes' start; stop them. CPU per
// publish of the workers' processes and of PostgreSQL's backends for this database comes from
// /proc (bench/cpu.ts) over the same span. Kinds interleave round by round; medians are printed.
// BENCH_PUBLISH_ROUNDS (3), BENCH_PUBLISH_POSTS (300).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.ts';
import { startFakeGraph } from '../src/dev/fake-graph/server.ts';
import { enqueuePublish } from '../src/domain/social-publish.ts';
import { startService } from '../src/main.ts';
import { connectAccount, signUpOwner } from './bench-service.ts';
import { type Child, median, startChild } from './child.ts';
import { cpuMeter } from './cpu.ts';

const ROUNDS = Number(process.env.BENCH_PUBLISH_ROUNDS ?? 3);
const POSTS = Number(process.env.BENCH_PUBLISH_POSTS ?? 300);
const CONCURRENCY = 4;
const POLL_MS = 500;
const LEAD_MS = 1500;
const PAGE_ID = '104857600123456';
const TOKEN = 'EAAG-bench-page-token';

type Measured = { rate: number; worker: number; postgres: number };

export async function publishRates(url: string): Promise<string[]> {
  const graph = await startFakeGraph({ accounts: { [PAGE_ID]: { token: TOKEN, channel: 'messenger' } } });
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
  const env = {
    PORT: '0',
    LOG_LEVEL: 'info',
    DATA_DIR: dir,
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: '16',
    WORKER: 'off',
    RATE_LIMIT_STANDARD_PER_MINUTE: '1000000',
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    WORKER_POLL_MS: String(POLL_MS),
    WORKER_CONCURRENCY: String(CONCURRENCY),
  };
  const svc = await startService(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  const s = svc.services;
  const database = new URL(url).pathname.slice(1);
  try {
    const { accessToken, org } = await signUpOwner(svc, 'Publish bench');
    await s.db.query("update organizations set plan = 'scale' where id = $1", [org]);
    const account = await connectAccount(svc, accessToken, {
      provider: 'facebook',
      external_id: PAGE_ID,
      access_token: TOKEN,
    });
    const baselineInfo = JSON.stringify({
      org,
      pageId: PAGE_ID,
      token: TOKEN,
      concurrency: CONCURRENCY,
      pollMs: POLL_MS,
    });

    /** Schedules POSTS posts with their jobs, due LEAD_MS from now; their ids and when they are due. */
    const schedule = (tag: string) =>
      s.db.transaction(async (tx) => {
        const rows = await tx.query<{ id: string; scheduled_at: string }>(
          `insert into public.social_posts (organization_id, platform, account_id, status, message, scheduled_at)
           select $1, 'facebook', $2, 'scheduled', $3 || ' post ' || g, now() + make_interval(secs => $5::float8 / 1000)
             from generate_series(1, $4::int) g
           returning id, scheduled_at::text`,
          [org, account, tag, POSTS, LEAD_MS],
        );
        for (const p of rows)
          await enqueuePublish(tx, s.queue, {
            organization_id: org,
            post_id: p.id,
            scheduled_at: p.scheduled_at,
          });
        return { ids: rows.map((p) => p.id), due: new Date(rows[0]?.scheduled_at as string).getTime() };
      });

    const round = async (tag: string, start: () => Promise<Child<unknown>>, processes: number) => {
      const children = await Promise.all(Array.from({ length: processes }, start));
      try {
        const { ids, due } = await schedule(tag);
        await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
        const started = performance.now();
        const meters = children.map((c, i) => cpuMeter(c.pid, i === 0 ? database : undefined));
        for (;;) {
          const [r] = await s.db.query<{ done: number; failed: number }>(
            `select count(*) filter (where status = 'published')::int as done,
                    count(*) filter (where status = 'failed')::int as failed
               from public.social_posts where id = any($1::uuid[])`,
            [ids],
          );
          if (r?.failed) throw new Error(`${tag}: ${r.failed} posts failed`);
          if (r?.done === POSTS) break;
          if (performance.now() - started > 300_000)
            throw new Error(`${tag}: ${r?.done} of ${POSTS} in 5 min`);
          await new Promise((res) => setTimeout(res, 100));
        }
        const seconds = (performance.now() - started) / 1000;
        const cpu = meters.map((m) => m(POSTS));
        return {
          rate: POSTS / seconds,
          worker: cpu.reduce((n, c) => n + c.server, 0),
          postgres: cpu[0]?.postgres ?? Number.NaN,
        };
      } finally {
        await Promise.all(children.map((c) => c.stop()));
      }
    };

    const worker = () => startChild('social-worker.ts', env);
    const bare = () =>
      startChild('social-publish-baseline.ts', {
        DATABASE_URL: url,
        META_GRAPH_URL: graph.url,
        BENCH_PUBLISH_INFO: baselineInfo,
      });
    const direct = async (): Promise<number> => {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < POSTS) {
            const res = await fetch(`${graph.url}/v26.0/${PAGE_ID}/feed`, {
              method: 'POST',
              headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
              body: JSON.stringify({ message: `Direct ${next}` }),
            });
            if (res.status !== 200) throw new Error(`fake: ${res.status} ${await res.text()}`);
            await res.text();
          }
        }),
      );
      return POSTS / ((performance.now() - started) / 1000);
    };

    const kinds = {
      bare1: [] as Measured[],
      one: [] as Measured[],
      two: [] as Measured[],
      bare2: [] as Measured[],
    };
    const raw: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      raw.push(await direct());
      kinds.bare1.push(await round(`bare-${r}`, bare, 1));
      kinds.one.push(await round(`one-${r}`, worker, 1));
      kinds.two.push(await round(`two-${r}`, worker, 2));
      kinds.bare2.push(await round(`bare2-${r}`, bare, 2));
      const f = (m: Measured[]) => m.at(-1)?.rate.toFixed(0);
      process.stdout.write(
        `social publish round ${r}: fake ${raw.at(-1)?.toFixed(0)}/s, bare ${f(kinds.bare1)}/s, 1 worker ${f(kinds.one)}/s, 2 workers ${f(kinds.two)}/s, bare ×2 ${f(kinds.bare2)}/s\n`,
      );
    }
    const rate = (ms: Measured[]) => median(ms.map((m) => m.rate));
    const line = (label: string, ms: Measured[]) =>
      `  ${label} ${rate(ms).toFixed(0).padStart(5)} publishes/s  CPU a publish: process(es) ${(median(ms.map((m) => m.worker)) / 1000).toFixed(2)} ms, PostgreSQL ${(median(ms.map((m) => m.postgres)) / 1000).toFixed(2)} ms   rounds: ${ms.map((m) => m.rate.toFixed(0)).join(' / ')}`;
    const ratio = (a: Measured[], b: Measured[]) =>
      `${(rate(a) / rate(b)).toFixed(2)}× (median of the rounds' own ratios ${median(a.map((m, i) => m.rate / (b[i] as Measured).rate)).toFixed(2)}×)`;
    return [
      `social postgres publishes: ${POSTS} due text posts a round, ${ROUNDS} rounds, ${CONCURRENCY} at a time a process, poll ${POLL_MS} ms; medians:`,
      `  fake Graph API, ${CONCURRENCY} direct POSTs  ${median(raw).toFixed(0).padStart(5)} calls/s`,
      line('bare node + pg, 1 process ', kinds.bare1),
      line('bare node + pg, 2 processes', kinds.bare2),
      line('svc worker, 1 process      ', kinds.one),
      line('svc worker, 2 processes    ', kinds.two),
      `  1 worker / bare: ${ratio(kinds.one, kinds.bare1)}; 2 workers / 1 worker: ${ratio(kinds.two, kinds.one)}`,
    ];
  } finally {
    await svc.close();
    await graph.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
