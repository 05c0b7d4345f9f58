// The service for bench/storage-memory.ts, in a process of its own so its memory is its own: the
// real wiring (startService) on a throwaway data directory, the bucket on the disk or on S3 as the
// environment says (STORAGE_URL), one organization to upload into. Sends the parent its URL, the
// organization and the service-role key (uploads as the operator: no plan in the way).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/main.ts';
import { signUpOwner } from './bench-service.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-storage-'));
const svc = await startService(
  loadConfig({ ...process.env, PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'warn', WORKER: 'off' }),
);
const { org } = await signUpOwner(svc, 'Bench Videos');
process.send?.({ url: svc.url, org, serviceRoleKey: svc.services.keys.serviceRoleKey });
process.once('SIGTERM', async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
