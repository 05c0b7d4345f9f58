// The big tenant of bench/scale.ts: an owner signed up over HTTP (so the bench holds a real access
// token), 100,000 contacts in their organization and 100,000 more spread over ten others.
import type { RunningService } from '../src/main.ts';
import type { Principal } from '../src/platform/db/database.ts';
import { signUpOwner } from './bench-service.ts';

export const TENANT_ROWS = 100_000;
export const OTHER_TENANTS = 10;

export type BigTenant = { org: string; accessToken: string; principal: Principal };

export async function seedBigTenant(svc: RunningService): Promise<BigTenant> {
  const { db } = svc.services;
  const { accessToken, claims, org } = await signUpOwner(svc, 'Scale');
  // No daily quota in the way of a few thousand requests.
  await db.query("update organizations set plan = 'scale' where id = $1", [org]);
  await db.query("update plans set api_calls_per_day = null where slug = 'scale'");
  const others = await db.query<{ id: string }>(
    `insert into public.organizations (name, plan) select 'Scale ' || g, 'scale' from generate_series(1, $1::int) g
     returning id`,
    [OTHER_TENANTS],
  );
  // One statement per tenant, so its rows share created_at (now()): every page boundary is a tie
  // broken by id, the case the order and the cursor must agree on.
  const contacts = `insert into public.contacts (organization_id, first_name, last_name, email, tags)
    select $1, 'First ' || g, 'Last ' || g, 'c' || g || '-' || $3 || '@example.test',
           case when g % 50 = 0 then array['vip'] else '{}' end
      from generate_series(1, $2::int) g`;
  // The largest plan allows 50,000 contacts: a scratch database raises the ceiling above the seed
  // (the trigger stays: it keeps the tenant's count, which agent-usage and estimates read).
  await db.query("update plans set contacts = 1000000 where slug = 'scale'");
  await db.query(contacts, [org, TENANT_ROWS, 'a']);
  for (const other of others) await db.query(contacts, [other.id, TENANT_ROWS / OTHER_TENANTS, other.id]);
  // Vacuum as autovacuum would by the time anyone searches: it also moves the rows from GIN's
  // pending list (fastupdate) into the trigram indexes, which a plain analyze does not.
  await db.query('vacuum analyze');
  return { org, accessToken, principal: { kind: 'user', userId: claims.sub as string, claims } };
}

/** The tenant's row at `offset` in newest-first order, as a cursor a client would hold. */
export async function rowAt(svc: RunningService, org: string, offset: number) {
  const [row] = await svc.services.db.query<{ created_at: string; id: string }>(
    `select to_json(created_at) #>> '{}' as created_at, id from public.contacts
      where organization_id = $1 order by created_at desc, id desc offset $2 limit 1`,
    [org, offset],
  );
  if (!row) throw new Error(`no row at offset ${offset}`);
  return row;
}
