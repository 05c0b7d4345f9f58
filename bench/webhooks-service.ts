// The service as bench/webhooks.ts measures it, in a process of its own: the real composition
// root (startService, the worker inline as `npm start` runs it) on DATABASE_URL or on PGlite in
// BENCH_DATA_DIR, logging at info to stdout like a deployment, Meta's receiver configured with
// the bench's app secret and the per-address limits out of the way. It signs up an owner on the
// scale plan (no daily quota) with a connected WhatsApp number, tells its parent the URL and the
// owner's credentials over IPC, answers `inbox` (rows not yet routed), and serves until SIGTERM. WORKER, WORKER_POLL_MS and
// WORKER_CONCURRENCY pass through from the environment.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { startFakeGraph } from '../src/dev/fake-graph/server.ts';
import { startService } from '../src/main.ts';
import { connectAccount, signUpOwner } from './bench-service.ts';
import { APP_SECRET, PHONE_ID, VERIFY_TOKEN } from './webhook-deliveries.ts';

export type ServiceInfo = { url: string; anonKey: string; accessToken: string };

const env = process.env;
// Connecting a number proves its token at the Graph API (src/channels/account-proof.ts): the fake
// answers that, here in this process; nothing else of the bench calls it.
const graph = await startFakeGraph({
  accounts: { [PHONE_ID]: { token: 'EAAG-bench-token', channel: 'whatsapp' } },
});
const config = loadConfig({
  META_GRAPH_URL: graph.url,
  META_INSTAGRAM_GRAPH_URL: graph.url,
  PORT: '0',
  LOG_LEVEL: 'info',
  DATA_DIR: env.BENCH_DATA_DIR ?? '',
  META_APP_SECRET: APP_SECRET,
  WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
  RATE_LIMIT_WEBHOOK_PER_MINUTE: '100000000',
  RATE_LIMIT_STANDARD_PER_MINUTE: '100000000',
  WORKER: env.WORKER,
  WORKER_POLL_MS: env.WORKER_POLL_MS,
  WORKER_CONCURRENCY: env.WORKER_CONCURRENCY,
  ...(env.DATABASE_URL ? { DATABASE_URL: env.DATABASE_URL, DATABASE_POOL_SIZE: '16' } : {}),
});
const svc = await startService(config);
const s = svc.services;
const { accessToken, org } = await signUpOwner(svc, 'Bench');
await s.db.query("update organizations set plan = 'scale' where id = $1", [org]);
await s.db.query("update plans set api_calls_per_day = null where slug = 'scale'");
s.plans.forget(org);
await connectAccount(svc, accessToken, {
  provider: 'whatsapp',
  external_id: PHONE_ID,
  access_token: 'EAAG-bench-token',
});

// BENCH_CPU_PROF=<dir>: this process's CPU profile from here to SIGTERM (--cpu-prof is not
// allowed in NODE_OPTIONS, and the bench starts this process through tsx).
const profiler = env.BENCH_CPU_PROF ? new Session() : null;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}

const info: ServiceInfo = { url: svc.url, anonKey: s.keys.anonKey, accessToken };
process.send?.(info);
// `inbox`: how many acknowledged deliveries the router has not taken yet (the bench waits for 0).
process.on('message', async (message) => {
  if (message !== 'inbox') return;
  const [row] = await s.db.query<{ n: number }>('select count(*)::int as n from app.webhook_inbox');
  process.send?.({ inbox: row?.n ?? 0 });
});
process.once('SIGTERM', async () => {
  if (profiler && env.BENCH_CPU_PROF) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(
      path.join(env.BENCH_CPU_PROF, `webhooks-service-${process.pid}.cpuprofile`),
      JSON.stringify(profile),
    );
  }
  await svc.close();
  await graph.close();
  process.exit(0);
});
