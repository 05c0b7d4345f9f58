import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../src/platform/db/database.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// `Prefer: count=planned` and `count=estimated` for a tenant, under RLS (src/rest/read.ts,
// docs/decisions.md "Estimated counts under RLS"): exact up to 1,000 rows, then an estimate of the
// tenant's own rows that other tenants' rows move no more than missing rows would. A value that is
// frequent in another tenant's rows and absent from the caller's must not raise the caller's
// estimate: that would tell the caller what the other tenant stores.

let svc: TestService;
let owner: Session;
let neighbour: Session;

const rest = (token: string) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${token}` },
  });

const OWN = 3000;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Estimates Ltd');
  neighbour = await signUp(svc, 'Neighbour Ltd');
  for (const s of [owner, neighbour]) {
    const r = await call(svc, 'POST', '/functions/v1/organization-plan', {
      token: svc.serviceRoleKey,
      body: { organization_id: orgOf(s), plan: 'scale' },
    });
    expect(r.status).toBe(200);
  }
  // The owner: 1,200 contacts at 'Shared', 1,800 at 'Own'. The neighbour: ten times as many, all
  // at 'Shared'. Statistics of the table then see 'Shared' as far more common than 'Own'.
  await svc.services.db.asPrincipal(SERVICE, async (tx) => {
    await tx.query(
      `insert into contacts (organization_id, first_name, company)
       select $1, 'c' || g, case when g % 5 < 2 then 'Shared' else 'Own' end from generate_series(1, $2::int) g`,
      [orgOf(owner), OWN],
    );
    await tx.query(
      `insert into contacts (organization_id, first_name, company)
       select $1, 'n' || g, 'Shared' from generate_series(1, $2::int) g`,
      [orgOf(neighbour), OWN * 10],
    );
    await tx.query(
      "insert into orders (organization_id, notes) select $1, 'o' || g from generate_series(1, 1500) g",
      [orgOf(owner)],
    );
  });
  await svc.services.db.query('analyze public.contacts, public.orders');
}, 120_000);
afterAll(() => svc?.stop());

describe('estimated counts for a tenant', () => {
  it('count the whole table of the tenant from its kept count, and page by offset against it', async () => {
    for (const count of ['planned', 'estimated'] as const) {
      const r = await rest(owner.access_token).from('contacts').select('id', { count }).range(2000, 2009);
      expect(r.error).toBeNull();
      expect(r.status).toBe(206);
      expect(r.data).toHaveLength(10);
      expect(r.count).toBe(OWN);
    }
  });

  it('are exact up to 1,000 rows, planned as well as estimated', async () => {
    for (const count of ['planned', 'estimated'] as const) {
      const r = await rest(owner.access_token)
        .from('contacts')
        .select('id', { count })
        .eq('company', 'Own')
        .like('first_name', 'c1%')
        .limit(1);
      expect(r.error).toBeNull();
      // c10–c19, c100–c199, c1000–c1999 at 'Own' (g % 5 of 2, 3 or 4): 6 + 60 + 600.
      expect(r.count).toBe(666);
    }
    // The neighbour's 30,000 'Shared' contacts count for nothing in the owner's answer.
    const none = await rest(owner.access_token)
      .from('contacts')
      .select('id', { count: 'planned' })
      .eq('company', 'Nobody')
      .limit(1);
    expect(none.count).toBe(0);
  });

  it('past 1,000 rows estimate blind to the values: a value common in another tenant weighs the same as one that is not', async () => {
    const estimate = async (company: string) => {
      const r = await rest(owner.access_token)
        .from('contacts')
        .select('id', { count: 'estimated' })
        .eq('company', company)
        .limit(5);
      expect(r.error).toBeNull();
      expect(r.data).toHaveLength(5);
      return r.count as number;
    };
    // The owner has 1,200 and 1,800 of them; read with the values, the statistics would put
    // 'Shared' far above 'Own'. Blind to them, the planner gives both the same share.
    const shared = await estimate('Shared');
    const own = await estimate('Own');
    expect(shared).toBe(own);
    // More than the 1,000 counted, never more than the tenant's own rows.
    expect(shared).toBeGreaterThan(1000);
    expect(shared).toBeLessThanOrEqual(OWN);
  });

  it('estimate a table without a kept count from the organization’s own figure, and never below the page', async () => {
    const r = await rest(owner.access_token).from('orders').select('id', { count: 'planned' }).limit(1);
    expect(r.error).toBeNull();
    expect(r.count).toBeGreaterThan(1000);
    expect(r.count).toBeLessThanOrEqual(3000);
    const deep = await rest(owner.access_token)
      .from('orders')
      .select('id', { count: 'planned' })
      .range(1490, 1499);
    expect(deep.data).toHaveLength(10);
    expect(deep.count).toBeGreaterThanOrEqual(1500);
  });

  it('a neighbour with no rows of its own past 1,000 gets exact counts of its own rows', async () => {
    const r = await rest(neighbour.access_token).from('orders').select('id', { count: 'planned' });
    expect(r.error).toBeNull();
    expect(r.count).toBe(0);
  });
});
