// The service as the HTTP benches run it: real process wiring on a throwaway data directory, one
// organization with 1,000 contacts and no daily quota, on PGlite and then on PostgreSQL.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { type RunningService, startService } from '../src/main.ts';
import { SERVICE } from '../src/platform/db/database.ts';
import type { Claims } from '../src/platform/jwt.ts';
import { withScratchDatabase } from './scratch-database.ts';

export type BenchTenant = { accessToken: string; claims: Claims; org: string; contactId: string };

/** An owner signed up over HTTP, as a person would: a real access token and a new organization. */
export async function signUpOwner(svc: RunningService, organizationName: string) {
  const signup = await fetch(`${svc.url}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: svc.services.keys.anonKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      email: `bench-${randomBytes(6).toString('hex')}@example.test`,
      password: 'password-8',
      data: { organization_name: organizationName },
    }),
  });
  if (signup.status !== 200) throw new Error(`signup: ${signup.status} ${await signup.text()}`);
  const { access_token: accessToken } = (await signup.json()) as { access_token: string };
  const claims = await svc.services.tokens.verify(accessToken);
  const org = (claims.app_metadata as { organization_id: string }).organization_id;
  return { accessToken, claims, org };
}

/** Connects an account over HTTP as the owner does (its token proven at the fake); its id. */
export async function connectAccount(
  svc: RunningService,
  accessToken: string,
  account: { provider: string; external_id: string; access_token: string },
): Promise<string> {
  const res = await fetch(`${svc.url}/functions/v1/connected-accounts`, {
    method: 'POST',
    headers: {
      apikey: svc.services.keys.anonKey,
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(account),
  });
  if (res.status !== 201) throw new Error(`connect: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/**
 * Starts the service with `env` (limits raised out of the way), signs up an owner whose
 * organization is on the scale plan with unlimited API calls, and seeds 1,000 contacts.
 */
async function startWithTenant(env: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
  const svc = await startService(
    loadConfig({
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATA_DIR: dir,
      RATE_LIMIT_STANDARD_PER_MINUTE: '1000000',
      ...env,
    }),
  );
  const s = svc.services;
  const { accessToken, claims, org } = await signUpOwner(svc, 'Bench');
  await s.db.query("update organizations set plan = 'scale' where id = $1", [org]);
  await s.db.query("update plans set api_calls_per_day = null where slug = 'scale'");
  await s.db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      `insert into contacts (organization_id, first_name, email, company)
       select $1, 'c' || g, 'c' || g || '@ex.test', 'Acme' from generate_series(1, 1000) g`,
      [org],
    ),
  );
  await s.db.query('analyze contacts');
  const [one] = await s.db.query<{ id: string }>(
    'select id from contacts where organization_id = $1 limit 1',
    [org],
  );
  const tenant: BenchTenant = { accessToken, claims, org, contactId: one?.id as string };
  return { svc, tenant, dir };
}

/**
 * Runs `bench` on PGlite, then on a scratch PostgreSQL database (skipped when the server cannot
 * be used), and prints each run's summary lines together at the end.
 */
export async function onBothEngines(
  tag: string,
  bench: (engine: string, svc: RunningService, tenant: BenchTenant) => Promise<string[]>,
  extraEnv: Record<string, string> = {},
) {
  const run = async (engine: string, env: Record<string, string>) => {
    const { svc, tenant, dir } = await startWithTenant({ ...extraEnv, ...env });
    try {
      return await bench(engine, svc, tenant);
    } finally {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const out = await run('pglite', {});
  const onPostgres = await withScratchDatabase(tag, (url) =>
    run('postgres', { DATABASE_URL: url, DATABASE_POOL_SIZE: '16' }),
  );
  out.push(...(onPostgres ?? []));
  console.log();
  for (const line of out) console.log(line);
}
