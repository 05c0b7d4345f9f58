// Connected accounts, conversations and messages in SQL (0016): what row-level security, the
// grants and app.open_conversation allow each caller, proved without HTTP. The attacker is A's
// owner, the most privileged person in A.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { as, seedAgent, seedTenant, sqlstate, type Tenant, unique } from './fixtures.ts';

let fresh: FreshDatabase;
let a: Tenant;
let b: Tenant;
const ids = { accountA: '', accountB: '', contactA: '', contactB: '' };

async function seedAccount(orgId: string) {
  const [row] = await fresh.db.query<{ id: string }>(
    `insert into app.connected_accounts (organization_id, provider, external_id, access_token_encrypted)
     values ($1, 'whatsapp', $2, 'v1:00000000:AAAA') returning id`,
    [orgId, unique('phone')],
  );
  return (row as { id: string }).id;
}
async function seedContact(orgId: string) {
  const [row] = await fresh.db.query<{ id: string }>(
    "insert into contacts (organization_id, first_name) values ($1, 'c') returning id",
    [orgId],
  );
  return (row as { id: string }).id;
}

beforeAll(async () => {
  fresh = await freshDatabase();
  a = await seedTenant(fresh.db, 'conv-a');
  b = await seedTenant(fresh.db, 'conv-b');
  ids.accountA = await seedAccount(a.orgId);
  ids.accountB = await seedAccount(b.orgId);
  ids.contactA = await seedContact(a.orgId);
  ids.contactB = await seedContact(b.orgId);
});
afterAll(() => fresh?.drop());

const open = (who: Tenant['owner']['as'], org: string, account: string, contact: string) =>
  as(fresh.db, who, 'select id from app.open_conversation($1, $2, $3)', [org, account, contact]);

describe('app.open_conversation', () => {
  it('opens one conversation per (account, contact) for members, and the same one again', async () => {
    const [first] = await open(a.member.as, a.orgId, ids.accountA, ids.contactA);
    const [again] = await open(a.owner.as, a.orgId, ids.accountA, ids.contactA);
    expect(first?.id).toBeDefined();
    expect(again?.id).toBe(first?.id);
  });

  it('refuses another organization, whatever ids it names, and read-only agents', async () => {
    expect(await sqlstate(open(a.owner.as, b.orgId, ids.accountB, ids.contactB))).toBe('42501');
    const reader = await seedAgent(fresh.db, a.orgId, ['read']);
    expect(await sqlstate(open(reader.as, a.orgId, ids.accountA, ids.contactA))).toBe('42501');
    const writer = await seedAgent(fresh.db, a.orgId, ['write']);
    expect(await open(writer.as, a.orgId, ids.accountA, ids.contactA)).toHaveLength(1);
  });

  it('finds another tenant’s account or contact no more than a missing one (SV404)', async () => {
    expect(await sqlstate(open(a.owner.as, a.orgId, ids.accountB, ids.contactA))).toBe('SV404');
    expect(await sqlstate(open(a.owner.as, a.orgId, ids.accountA, ids.contactB))).toBe('SV404');
  });
});

describe('grants', () => {
  it('keeps the secret columns from every API role, owners included', async () => {
    for (const column of ['access_token_encrypted', 'webhook_secret_encrypted']) {
      expect(await sqlstate(as(fresh.db, a.owner.as, `select ${column} from app.connected_accounts`))).toBe(
        '42501',
      );
    }
    const rows = await as(fresh.db, a.owner.as, 'select id from public.connected_accounts');
    expect(rows.map((r) => r.id)).toEqual([ids.accountA]);
  });

  it('lets members read but not connect or disconnect accounts', async () => {
    expect(await as(fresh.db, a.member.as, 'select id from app.connected_accounts')).toHaveLength(1);
    const changed = await as(
      fresh.db,
      a.member.as,
      'update app.connected_accounts set disconnected_at = now() returning id',
    );
    expect(changed).toEqual([]);
    expect(
      await sqlstate(
        as(
          fresh.db,
          a.member.as,
          "insert into app.connected_accounts (provider, external_id, access_token_encrypted) values ('whatsapp', 'x', 'v1:0:0')",
        ),
      ),
    ).toBe('42501');
  });

  it('lets nobody write conversations or messages directly, but for triage (status, unread count)', async () => {
    expect(
      await sqlstate(
        as(
          fresh.db,
          a.owner.as,
          "insert into conversations (account_id, contact_id, channel) values ($1, $2, 'whatsapp')",
          [ids.accountA, ids.contactA],
        ),
      ),
    ).toBe('42501');
    expect(await sqlstate(as(fresh.db, a.owner.as, "update conversations set channel = 'messenger'"))).toBe(
      '42501',
    );
    expect(await sqlstate(as(fresh.db, a.owner.as, "update messages set status = 'read'"))).toBe('42501');
    expect(await sqlstate(as(fresh.db, a.owner.as, 'delete from messages'))).toBe('42501');
  });

  it('shows each tenant only its own conversations and messages', async () => {
    const [conv] = await fresh.db.query<{ id: string }>('select id from app.open_conversation($1, $2, $3)', [
      b.orgId,
      ids.accountB,
      ids.contactB,
    ]);
    await fresh.db.query(
      "insert into messages (organization_id, conversation_id, account_id, direction, type, body, status) values ($1, $2, $3, 'in', 'text', 'hi', 'received')",
      [b.orgId, conv?.id, ids.accountB],
    );
    expect(await as(fresh.db, a.owner.as, 'select id from conversations where id = $1', [conv?.id])).toEqual(
      [],
    );
    expect(await as(fresh.db, a.owner.as, 'select id from messages')).toEqual([]);
    expect(await as(fresh.db, b.member.as, 'select id from messages')).toHaveLength(1);
    const [state] = await as(
      fresh.db,
      b.member.as,
      'select unread_count, last_inbound_at from conversations',
    );
    expect(state?.unread_count).toBe(1);
    expect(state?.last_inbound_at).not.toBeNull();
  });

  it('refuses a message whose account is not its conversation’s', async () => {
    const [conv] = await as(fresh.db, a.owner.as, 'select id from conversations limit 1');
    const other = await seedAccount(a.orgId);
    expect(
      await sqlstate(
        fresh.db.query(
          "insert into messages (organization_id, conversation_id, account_id, direction, type, status) values ($1, $2, $3, 'out', 'text', 'queued')",
          [a.orgId, conv?.id, other],
        ),
      ),
    ).toBe('23503');
  });
});

describe('the order of messages', () => {
  it('keeps messages written in one transaction (a webhook delivery of several) in the order written', async () => {
    const [conv] = await fresh.db.query<{ id: string }>('select id from app.open_conversation($1, $2, $3)', [
      a.orgId,
      ids.accountA,
      ids.contactA,
    ]);
    const insert =
      "insert into messages (organization_id, conversation_id, account_id, direction, type, body, status) values ($1, $2, $3, 'in', 'text', $4, 'received')";
    await fresh.db.transaction(async (tx) => {
      await tx.query(insert, [a.orgId, conv?.id, ids.accountA, 'first']);
      // PGlite's clock counts milliseconds: let one pass.
      await tx.query('select pg_sleep(0.003)');
      await tx.query(insert, [a.orgId, conv?.id, ids.accountA, 'second']);
    });
    const rows = await fresh.db.query<{ body: string }>(
      'select body from messages where conversation_id = $1 order by created_at desc, id desc limit 2',
      [conv?.id],
    );
    expect(rows.map((r) => r.body)).toEqual(['second', 'first']);
  });
});
