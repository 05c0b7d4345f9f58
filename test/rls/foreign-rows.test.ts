// Another tenant's rows look exactly like missing ones, even to the triggers that run before
// row-level security checks a written row (migrations/0010_foreign_rows_look_missing.sql): what
// a tenant writes over /rest/v1 with another's ids is refused without telling whether that
// tenant's order exists or what state it is in.
import { randomUUID } from 'node:crypto';
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../src/platform/db/database.ts';
import { onPostgres } from '../helpers/db.ts';
import { orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let a: Session;
let orgB: string;
/** Tenant B's order, confirmed: its lines are locked. */
let confirmedB: string;
/** A pending order of tenant A with one line. */
let lineA: string;

const rest = () =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${a.access_token}` },
  });

beforeAll(async () => {
  svc = await startTestService();
  a = await signUp(svc, 'Looking Ltd');
  orgB = orgOf(await signUp(svc, 'Hidden Ltd'));
  confirmedB = await svc.services.db.asPrincipal(SERVICE, async (tx) => {
    const [o] = await tx.query<{ id: string }>(
      'insert into orders (organization_id) values ($1) returning id',
      [orgB],
    );
    await tx.query("update orders set status = 'confirmed' where id = $1", [o?.id]);
    return o?.id as string;
  });
  const order = await rest().from('orders').insert({ notes: 'mine' }).select('id').single();
  const line = await rest()
    .from('order_items')
    .insert({ order_id: order.data?.id, name: 'mine', quantity: 1 })
    .select('id')
    .single();
  expect(line.error).toBeNull();
  lineA = line.data?.id as string;
});
afterAll(() => svc?.stop());

/** What a client sees of a refusal, with any id it names taken out. */
const seen = (r: { status: number; error: unknown }) => ({
  status: r.status,
  error: JSON.parse(JSON.stringify(r.error).replaceAll(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>')),
});

describe('another tenant’s order through order_items', () => {
  it('a line in their organization on their confirmed order is refused like one on no order', async () => {
    const line = (order_id: string) => ({ organization_id: orgB, order_id, name: 'probe', quantity: 1 });
    const onTheirs = await rest().from('order_items').insert(line(confirmedB)).select();
    const onNone = await rest().from('order_items').insert(line(randomUUID())).select();
    expect(onTheirs.status).toBe(403);
    expect(onTheirs.error).toMatchObject({ code: '42501' });
    expect(JSON.stringify(onTheirs.error)).not.toMatch(/confirmed|order_locked/);
    expect(seen(onTheirs)).toEqual(seen(onNone));
  });

  it('a line in my organization on their order is refused like one on a missing order of mine', async () => {
    const onTheirs = await rest()
      .from('order_items')
      .insert({ order_id: confirmedB, name: 'probe', quantity: 1 })
      .select();
    const onNone = await rest()
      .from('order_items')
      .insert({ order_id: randomUUID(), name: 'probe', quantity: 1 })
      .select();
    expect(onTheirs.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(onTheirs.error)).not.toMatch(/confirmed|order_locked/);
    expect(seen(onTheirs)).toEqual(seen(onNone));
  });

  it('moving my line onto their confirmed order is refused like moving it onto no order', async () => {
    const move = (order_id: string) =>
      rest().from('order_items').update({ organization_id: orgB, order_id }).eq('id', lineA).select();
    const onTheirs = await move(confirmedB);
    const onNone = await move(randomUUID());
    expect(onTheirs.status).toBe(403);
    expect(JSON.stringify(onTheirs.error)).not.toMatch(/confirmed|order_locked/);
    expect(seen(onTheirs)).toEqual(seen(onNone));
    const [kept] = await svc.services.db.query<{ organization_id: string }>(
      'select organization_id from order_items where id = $1',
      [lineA],
    );
    expect(kept?.organization_id).toBe(orgOf(a));
  });
});

describe('another tenant’s order counter', () => {
  // Needs two transactions at once, which PGlite never runs (CI runs this on PostgreSQL).
  it.runIf(onPostgres())(
    'an order sent with their organization is refused without waiting on their open order',
    async () => {
      const answered = await svc.services.db.transaction(async (tx) => {
        // Tenant B is creating an order right now: its counter row is locked until this commits.
        await tx.query('insert into orders (organization_id) values ($1)', [orgB]);
        return rest().from('orders').insert({ organization_id: orgB, notes: 'probe' }).select();
      });
      expect(answered.status).toBe(403);
      expect(answered.error).toMatchObject({ code: '42501' });
    },
  );
});
