import { loadSigningKeys } from '../auth/signing-keys.ts';
import type { Config } from '../config.ts';
import { setPlan } from '../domain/organizations.ts';
import { SERVICE } from '../platform/db/database.ts';
import { AppError } from '../platform/errors.ts';
import { isConnectionRefused, openForCommand, serviceUrl } from './running-service.ts';

/**
 * Asks the running service (organization-plan, with the service-role key), so the embedded
 * database is never opened by two processes; only when nothing listens does it open the database
 * (under the data directory's lock on the embedded default).
 */
export async function setPlanCommand(config: Config, organizationId: string, plan: string): Promise<number> {
  const keys = await loadSigningKeys(config.dataDir, config.jwtPrivateKey);
  const url = `${serviceUrl(config)}/functions/v1/organization-plan`;
  let result: unknown;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.serviceRoleKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ organization_id: organizationId, plan }),
    });
    result = await res.json();
    if (!res.ok) {
      process.stderr.write(`${JSON.stringify(result)}\n`);
      return 1;
    }
  } catch (err) {
    if (!isConnectionRefused(err)) throw err;
    const db = await openForCommand(config, 'org set-plan');
    try {
      result = await db.asPrincipal(SERVICE, (tx) => setPlan(tx, organizationId, plan));
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      process.stderr.write(`${JSON.stringify({ error: e.code, message: e.message, details: e.details })}\n`);
      return 1;
    } finally {
      await db.close();
    }
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}
