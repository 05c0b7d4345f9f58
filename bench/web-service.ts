// The service as `npm start` runs it on the embedded default (PGlite, a fresh data directory),
// serving the built dashboard; a child of bench/web.ts. Sends {url, session} once it serves:
// a signed-up owner's session, so the bench can open a signed-in page.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/main.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-web-'));
const svc = await startService(loadConfig({ PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: dir }));
const signup = await fetch(`${svc.url}/auth/v1/signup`, {
  method: 'POST',
  headers: { apikey: svc.services.keys.anonKey, 'content-type': 'application/json' },
  body: JSON.stringify({
    email: `bench-web-${process.pid}@example.test`,
    password: 'password-8',
    data: { organization_name: 'Bench shop' },
  }),
});
if (signup.status !== 200) throw new Error(`signup: ${signup.status} ${await signup.text()}`);
process.send?.({ url: svc.url, anonKey: svc.services.keys.anonKey, session: await signup.json() });
process.once('SIGTERM', async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
