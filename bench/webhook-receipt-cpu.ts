// What one Meta receipt costs PostgreSQL and this process, one delivery at a time, beside the bare
// server's insert of the raw body (bench/webhooks-baseline.ts's statement) on the same database:
// the inbox insert of src/domain/webhook-inbox.ts (receiveMeta) called directly, no HTTP. CPU from
// /proc (bench/cpu.ts), rounds interleaved. PostgreSQL only (BENCH_DATABASE_URL, a scratch
// database); BENCH_N deliveries a round (1000), BENCH_ROUNDS (3). A probe, not a test.
//   node --import tsx bench/webhook-receipt-cpu.ts
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.ts';
import { startFakeGraph } from '../src/dev/fake-graph/server.ts';
import { receiveMeta } from '../src/domain/webhook-inbox.ts';
import { startService } from '../src/main.ts';
import { connectAccount, signUpOwner } from './bench-service.ts';
import { cpuMeter } from './cpu.ts';
import { withScratchDatabase } from './scratch-database.ts';
import { APP_SECRET, delivery, PHONE_ID, VERIFY_TOKEN } from './webhook-deliveries.ts';

const N = Number(process.env.BENCH_N ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BARE = `insert into app.webhook_deliveries (provider, delivery_id, payload) values ('meta', $1, $2)
  on conflict (provider, delivery_id) do nothing`;

await withScratchDatabase('receipt_cpu', async (url) => {
  const graph = await startFakeGraph({
    accounts: { [PHONE_ID]: { token: 'EAAG-bench-token', channel: 'whatsapp' } },
  });
  const config = loadConfig({
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    PORT: '0',
    LOG_LEVEL: 'warn',
    META_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
    WORKER: 'off',
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: '4',
  });
  const svc = await startService(config);
  const s = svc.services;
  const { accessToken } = await signUpOwner(svc, 'Receipt');
  await connectAccount(svc, accessToken, {
    provider: 'whatsapp',
    external_id: PHONE_ID,
    access_token: 'EAAG-bench-token',
  });
  const database = new URL(url).pathname.slice(1);
  const runs = {
    receipt: (tag: string, n: number) => {
      const d = delivery(tag, n);
      const deliveryId = createHash('sha256').update(d.body).digest('hex');
      return receiveMeta(s.db, deliveryId, d.body);
    },
    bare: (tag: string, n: number) => {
      const d = delivery(tag, n);
      const deliveryId = createHash('sha256').update(d.body).digest('hex');
      return s.db.query(BARE, [deliveryId, d.body], { prepare: true });
    },
  };
  for (let round = 1; round <= ROUNDS; round++)
    for (const [which, run] of Object.entries(runs)) {
      const meter = cpuMeter(process.pid, database);
      const started = performance.now();
      for (let n = 0; n < N; n++) await run(`${which}-${round}`, n);
      const wall = (performance.now() - started) / N;
      const cpu = meter(N);
      console.log(
        `round ${round} ${which.padEnd(7)} ${wall.toFixed(2)} ms a delivery, CPU ` +
          `${(cpu.server / 1000).toFixed(2)} ms this process + ${(cpu.postgres / 1000).toFixed(2)} ms PostgreSQL`,
      );
    }
  await svc.close();
  await graph.close();
});
process.exit(0);
