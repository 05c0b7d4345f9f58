// /realtime/v1 as supabase-js subscribes to it (docs/realtime.md): inserts, updates and deletes
// arrive with the shape realtime-js builds its payload from; only rows the subscriber may read
// under its own claims reach it; a filter decides as the database compares; joins that name what
// /rest/v1 does not serve are refused.
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { clientFor, closeAll, subscribe } from './subscriber.ts';

let svc: TestService;
let owner: Session;
let ownerClient: SupabaseClient;
const clients: SupabaseClient[] = [];
const client = (token: string) => {
  const c = clientFor(svc, token);
  clients.push(c);
  return c;
};

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Realtime Shop');
  ownerClient = client(owner.access_token);
});
afterAll(async () => {
  await closeAll(clients);
  await svc?.stop();
});

const insertContact = async (c: SupabaseClient, row: Record<string, unknown>) => {
  const { data, error } = await c.from('contacts').insert(row).select().single();
  if (error) throw error;
  return data as { id: string; organization_id: string };
};

describe('postgres_changes', () => {
  it('an insert, an update and a delete arrive with the row and its keys', async () => {
    const sub = await subscribe(client(owner.access_token), { table: 'contacts' });
    const row = await insertContact(ownerClient, {
      first_name: 'Ada',
      tags: ['vip'],
      address: { city: 'Lyon' },
    });
    const inserted = await sub.next();
    expect(inserted).toMatchObject({
      schema: 'public',
      table: 'contacts',
      eventType: 'INSERT',
      new: {
        id: row.id,
        organization_id: orgOf(owner),
        first_name: 'Ada',
        tags: ['vip'],
        address: { city: 'Lyon' },
      },
      old: {},
    });
    expect(Date.parse(inserted.commit_timestamp)).not.toBeNaN();

    await ownerClient.from('contacts').update({ first_name: 'Ada L.' }).eq('id', row.id);
    const updated = await sub.next();
    expect(updated).toMatchObject({
      eventType: 'UPDATE',
      new: { id: row.id, first_name: 'Ada L.' },
      old: { id: row.id, organization_id: orgOf(owner) },
    });

    await ownerClient.from('contacts').delete().eq('id', row.id);
    const deleted = await sub.next();
    expect(deleted).toMatchObject({
      eventType: 'DELETE',
      new: {},
      old: { id: row.id, organization_id: orgOf(owner) },
    });
  });

  it("another organization's rows never arrive", async () => {
    const stranger = await signUp(svc, 'Other Shop');
    const sub = await subscribe(client(stranger.access_token), { table: 'contacts' });
    await insertContact(ownerClient, { first_name: 'Not yours' });
    // Changes are delivered in commit order: the stranger's own row comes after the other one.
    const own = await insertContact(client(stranger.access_token), { first_name: 'Yours' });
    const first = await sub.next();
    expect(first.new).toMatchObject({ id: own.id, first_name: 'Yours' });
    expect(sub.pending()).toBe(0);
  });

  it('an event only for the operation subscribed to', async () => {
    const sub = await subscribe(client(owner.access_token), { table: 'contacts', event: 'DELETE' });
    const row = await insertContact(ownerClient, { first_name: 'Brief' });
    await ownerClient.from('contacts').delete().eq('id', row.id);
    expect(await sub.next()).toMatchObject({ eventType: 'DELETE', old: { id: row.id } });
    expect(sub.pending()).toBe(0);
  });

  it("a row that moves out of the filter's reach stops sending its events", async () => {
    const sub = await subscribe(client(owner.access_token), { table: 'contacts', filter: 'company=eq.Acme' });
    const row = await insertContact(ownerClient, { first_name: 'Moving', company: 'Acme' });
    expect((await sub.next()).new).toMatchObject({ id: row.id, company: 'Acme' });
    await ownerClient.from('contacts').update({ company: 'Elsewhere' }).eq('id', row.id);
    await ownerClient.from('contacts').update({ first_name: 'Moved' }).eq('id', row.id);
    const marker = await insertContact(ownerClient, { first_name: 'Marker', company: 'Acme' });
    expect((await sub.next()).new).toMatchObject({ id: marker.id });
    expect(sub.pending()).toBe(0);
  });

  it('filters compare as the column type: in, and gt on a timestamp', async () => {
    const sub = await subscribe(client(owner.access_token), {
      table: 'contacts',
      event: 'INSERT',
      filter: 'first_name=in.(Ann,"Bo")',
    });
    await insertContact(ownerClient, { first_name: 'Cy' });
    const bo = await insertContact(ownerClient, { first_name: 'Bo' });
    expect((await sub.next()).new).toMatchObject({ id: bo.id });
    const later = await subscribe(client(owner.access_token), {
      table: 'contacts',
      event: 'INSERT',
      filter: 'created_at=gt.2000-01-01T00:00:00Z',
    });
    const now = await insertContact(ownerClient, { first_name: 'Now' });
    expect((await later.next()).new).toMatchObject({ id: now.id });
  });
});

describe('joins', () => {
  it('a table /rest/v1 does not serve, or a filter on a missing column, is refused at subscribe', async () => {
    const c = client(owner.access_token);
    await expect(subscribe(c, { table: 'webhook_events' })).rejects.toThrow(/not offered/);
    await expect(subscribe(c, { table: 'contacts', filter: 'nope=eq.1' })).rejects.toThrow(/does not have/);
    await expect(subscribe(c, { table: 'contacts', filter: 'created_at=gt.yesterday-ish' })).rejects.toThrow(
      /not a timestamp/,
    );
  });

  it('a channel with only the anon key joins and hears nothing', async () => {
    const sub = await subscribe(client(svc.anonKey), { table: 'contacts' });
    const mine = await subscribe(client(owner.access_token), { table: 'contacts' });
    const row = await insertContact(ownerClient, { first_name: 'Private' });
    expect((await mine.next()).new).toMatchObject({ id: row.id });
    expect(sub.pending()).toBe(0);
  });

  it('the websocket needs the API key', async () => {
    const ws = new WebSocket(`${svc.url.replace(/^http/, 'ws')}/realtime/v1/websocket?vsn=2.0.0`);
    const status = await new Promise<number | undefined>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      ws.on('open', () => resolve(101));
      ws.on('error', () => {}); // the refusal, reported above
    });
    ws.terminate();
    expect(status).toBe(401);
  });
});
