// The service of bench/scale.ts in a process of its own (bench/child.ts): the real composition root
// on DATABASE_URL, the big tenant seeded (scale-seed.ts), logging to stdout as a deployment would.
// It tells its parent what the load generator needs (URL, keys, tokens, ids) and serves until
// SIGTERM.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/main.ts';
import { seedBigTenant } from './scale-seed.ts';

const url = process.env.DATABASE_URL as string;
const svc = await startService(
  loadConfig({
    PORT: '0',
    LOG_LEVEL: 'info',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-bench-scale-')),
    DATABASE_URL: url,
    RATE_LIMIT_STANDARD_PER_MINUTE: '100000000',
  }),
);
const t = performance.now();
const tenant = await seedBigTenant(svc, url);
const seconds = (performance.now() - t) / 1000;
process.send?.({ url: svc.url, anonKey: svc.services.keys.anonKey, tenant, seconds });
process.once('SIGTERM', () => {
  svc.close().then(() => process.exit(0));
});
