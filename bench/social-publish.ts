// Publishes per second through the worker against the fake Graph API, beside the same number of
// plain Graph POSTs sent to the fake directly, in the same run (bench/social.ts runs it on both
// engines). Each round schedules POSTS text posts on a Facebook Page as the social functions do
// (row and publisher job in one transaction), waits until they are due, starts the worker
// (`startJobs`, WORKER_CONCURRENCY 4, the service's own pool) and times it until every post is
// `published`: so a figure includes the worker's start and up to one poll (WORKER_POLL_MS 500),
// and per post the claim, `POST /{page-id}/feed`, the permalink read and the record. The baseline
// is CONCURRENCY loops POSTing /feed straight to the fake until POSTS are answered. Rounds
// interleave the two; medians are printed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startFakeGraph } from '../src/dev/fake-graph/server.ts';
import { enqueuePublish } from '../src/domain/social-publish.ts';
import { startJobs } from '../src/jobs/index.ts';
import { startService } from '../src/main.ts';
import { signUpOwner } from './bench-service.ts';

const ROUNDS = 3;
const POSTS = 200;
const CONCURRENCY = 4;
const PAGE_ID = '104857600123456';
const TOKEN = 'EAAG-bench-page-token';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** `env` adds to the service's configuration (DATABASE_URL for PostgreSQL; none for PGlite). */
export async function publishRates(engine: string, env: Record<string, string>): Promise<string[]> {
  const graph = await startFakeGraph({ accounts: { [PAGE_ID]: { token: TOKEN, channel: 'messenger' } } });
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
  const config = loadConfig({
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATA_DIR: dir,
    WORKER: 'off',
    RATE_LIMIT_STANDARD_PER_MINUTE: '1000000',
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    WORKER_POLL_MS: '500',
    WORKER_CONCURRENCY: String(CONCURRENCY),
    ...env,
  });
  const svc = await startService(config);
  const s = svc.services;
  try {
    const { accessToken, org } = await signUpOwner(svc, 'Publish bench');
    await s.db.query("update organizations set plan = 'scale' where id = $1", [org]);
    const connect = await fetch(`${svc.url}/functions/v1/connected-accounts`, {
      method: 'POST',
      headers: {
        apikey: s.keys.anonKey,
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ provider: 'facebook', external_id: PAGE_ID, access_token: TOKEN }),
    });
    if (connect.status !== 201) throw new Error(`connect: ${connect.status} ${await connect.text()}`);
    const account = ((await connect.json()) as { id: string }).id;

    const raw = async (): Promise<number> => {
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

    const throughWorker = async (round: number): Promise<number> => {
      const ids = await s.db.transaction(async (tx) => {
        const rows = await tx.query<{ id: string; scheduled_at: string }>(
          `insert into public.social_posts (organization_id, platform, account_id, status, message, scheduled_at)
           select $1, 'facebook', $2, 'scheduled', 'Round ' || $3 || ' post ' || g, now() + interval '1 second'
             from generate_series(1, $4::int) g
           returning id, scheduled_at::text`,
          [org, account, round, POSTS],
        );
        for (const p of rows)
          await enqueuePublish(tx, s.queue, {
            organization_id: org,
            post_id: p.id,
            scheduled_at: p.scheduled_at,
          });
        return rows.map((p) => p.id);
      });
      await new Promise((r) => setTimeout(r, 1100)); // every post due
      const started = performance.now();
      const queue = await startJobs(
        { config, db: s.db, log: pino({ level: 'silent' }), now: () => new Date(), secrets: s.secrets },
        { work: true },
      );
      try {
        for (;;) {
          const [r] = await s.db.query<{ done: number; failed: number }>(
            `select count(*) filter (where status in ('published', 'failed'))::int as done,
                    count(*) filter (where status = 'failed')::int as failed
               from public.social_posts where id = any($1::uuid[])`,
            [ids],
          );
          if (r?.failed) throw new Error(`${r.failed} posts failed`);
          if (r?.done === POSTS) break;
          await new Promise((res) => setTimeout(res, 20));
        }
        return POSTS / ((performance.now() - started) / 1000);
      } finally {
        await queue.stop();
      }
    };

    const direct: number[] = [];
    const worker: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      direct.push(await raw());
      worker.push(await throughWorker(round));
      process.stdout.write(
        `social publish ${engine} round ${round}: direct ${direct.at(-1)?.toFixed(0)}/s, worker ${worker.at(-1)?.toFixed(0)}/s\n`,
      );
    }
    const [d, w] = [median(direct), median(worker)];
    return [
      `social ${engine}: ${POSTS} scheduled text posts a round, ${ROUNDS} rounds, WORKER_CONCURRENCY ${CONCURRENCY}; medians: through the worker ${w.toFixed(0)} publishes/s; the same POSTs straight to the fake, ${CONCURRENCY} callers: ${d.toFixed(0)}/s (${(d / w).toFixed(1)}× the worker's rate)`,
    ];
  } finally {
    await svc.close();
    await graph.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
