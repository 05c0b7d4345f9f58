import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../src/platform/db/database.ts';
import { loadMigrations, migrate } from '../../src/platform/db/migrate.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// For every exposed table: tenant A, by the ids of B's rows, sees, changes and deletes nothing.
let svc: TestService;
let a: Session;
let b: Session;
const theirs = new Map<string, { column: string; value: string }>();

beforeAll(async () => {
  svc = await startTestService();
  a = await signUp(svc, 'Tenant A');
  b = await signUp(svc, 'Tenant B');
  const orgB = orgOf(b);
  await call(svc, 'POST', '/functions/v1/agent-api-key-create', {
    token: b.access_token,
    body: { name: 'b key', scopes: ['read'] },
  });
  await call(svc, 'POST', '/functions/v1/agent-auth', { body: { api_key: `svc_ak_${'q'.repeat(48)}` } });
  const ids = await svc.services.db.asPrincipal(SERVICE, async (tx) => {
    const one = async (sql: string) =>
      ((await tx.query<{ id: string }>(sql, [orgB]))[0] as { id: string }).id;
    const contact = await one(
      "insert into contacts (organization_id, first_name) values ($1, 'B') returning id",
    );
    const item = await one(
      "insert into inventory_items (organization_id, name) values ($1, 'B item') returning id",
    );
    const order = await one(
      'insert into orders (organization_id, contact_id) values ($1, null) returning id',
    );
    const line = await tx.query<{ id: string }>(
      "insert into order_items (organization_id, order_id, item_id, name, quantity) values ($1, $2, $3, 'B line', 1) returning id",
      [orgB, order, item],
    );
    const event = await tx.query<{ id: string }>(
      "insert into order_status_events (organization_id, order_id, to_status) values ($1, $2, 'pending') returning id",
      [orgB, order],
    );
    const warehouse = await one('select id from warehouses where organization_id = $1');
    const key = await one('select id from agent_api_keys where organization_id = $1');
    await tx.query("update agent_auth_attempts set organization_id = $1 where key_prefix = 'svc_ak_qqqqq'", [
      orgB,
    ]);
    const attempt = (
      await tx.query<{ id: string }>('select id::text from agent_auth_attempts where organization_id = $1', [
        orgB,
      ])
    )[0]?.id;
    const account = await one(
      "insert into app.connected_accounts (organization_id, provider, external_id, access_token_encrypted) values ($1, 'whatsapp', 'iso-' || gen_random_uuid(), 'v1:00000000:AAAA') returning id",
    );
    const conversation = (
      await tx.query<{ id: string }>(
        "insert into conversations (organization_id, account_id, contact_id, channel) values ($1, $2, $3, 'whatsapp') returning id",
        [orgB, account, contact],
      )
    )[0]?.id;
    const message = (
      await tx.query<{ id: string }>(
        "insert into messages (organization_id, conversation_id, account_id, direction, type, body, status) values ($1, $2, $3, 'in', 'text', 'hi', 'received') returning id",
        [orgB, conversation, account],
      )
    )[0]?.id;
    return {
      contact,
      item,
      order,
      line: line[0]?.id,
      event: event[0]?.id,
      warehouse,
      key,
      attempt,
      account,
      conversation,
      message,
    };
  });
  for (const [table, value] of [
    ['contacts', ids.contact],
    ['inventory_items', ids.item],
    ['orders', ids.order],
    ['order_items', ids.line],
    ['order_status_events', ids.event],
    ['warehouses', ids.warehouse],
    ['agent_api_keys', ids.key],
    ['agent_auth_attempts', ids.attempt],
    ['organizations', orgB],
    ['connected_accounts', ids.account],
    ['conversations', ids.conversation],
    ['messages', ids.message],
  ] as const) {
    theirs.set(table, { column: 'id', value: value as string });
  }
  theirs.set('organization_members', { column: 'user_id', value: b.user.id });
});
afterAll(() => svc?.stop());

const req = (method: string, table: string, body?: unknown) => {
  const { column, value } = theirs.get(table) as { column: string; value: string };
  return fetch(`${svc.url}/rest/v1/${table}?${column}=eq.${value}`, {
    method,
    headers: {
      apikey: svc.anonKey,
      authorization: `Bearer ${a.access_token}`,
      'content-type': 'application/json',
      prefer: 'return=representation',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
};

describe('cross-tenant requests by id, on every exposed table', () => {
  const tables = [
    'contacts',
    'inventory_items',
    'orders',
    'order_items',
    'order_status_events',
    'warehouses',
    'agent_api_keys',
    'agent_auth_attempts',
    'organizations',
    'organization_members',
    'connected_accounts',
    'conversations',
    'messages',
  ];
  it.each(tables)('%s: nothing seen, changed or deleted', async (table) => {
    const seen = await req('GET', table);
    expect(seen.status).toBe(200);
    expect(await seen.json()).toEqual([]);
    const changed = await req(
      'PATCH',
      table,
      table === 'organization_members' ? { role: 'member' } : { name: 'stolen' },
    );
    // No row is visible to change: an empty result, or a refusal where the column is not writable.
    if (changed.status === 200) expect(await changed.json()).toEqual([]);
    else expect([400, 403]).toContain(changed.status);
    const deleted = await req('DELETE', table);
    if (deleted.status === 200) expect(await deleted.json()).toEqual([]);
    else expect(deleted.status).toBe(403);
    const { column, value } = theirs.get(table) as { column: string; value: string };
    const [still] = await svc.services.db.query<{ n: number }>(
      `select count(*)::int as n from ${table} where ${column}::text = $1`,
      [value],
    );
    expect(still?.n).toBe(1);
  });
});

describe('the schema cache', () => {
  it('picks up a table added by a later migration, with no restart', async () => {
    const sql = `create table public.widgets (
        organization_id uuid not null default app.current_org_id() references public.organizations (id),
        id uuid not null default gen_random_uuid(), name text not null, primary key (organization_id, id));
      select app.apply_tenant_policies('public.widgets');`;
    const headers = { apikey: svc.anonKey, authorization: `Bearer ${a.access_token}` };
    expect((await fetch(`${svc.url}/rest/v1/widgets`, { headers })).status).toBe(404);
    // As `svc migrate` does: the migrator announces the change; the service reloads its cache.
    await migrate(svc.services.db, [
      ...loadMigrations(),
      { name: '9999_widgets.sql', sql, checksum: 'test' },
    ]);
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await fetch(`${svc.url}/rest/v1/widgets`, { headers })).status;
    }
    expect(status).toBe(200);
  });
});
