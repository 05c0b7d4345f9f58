import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let writer: Client;
let reader: Client;
let stranger: Client;

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Contacts Ltd');
  await setPlan(svc, owner, 'starter');
  writer = await mcpClient(svc, (await agentToken(svc, owner, ['write'])).token);
  reader = await mcpClient(svc, (await agentToken(svc, owner, ['read'])).token);
  const other = await signUp(svc, 'Strangers Ltd');
  await setPlan(svc, other, 'starter');
  stranger = await mcpClient(svc, (await agentToken(svc, other, ['write'])).token);
});
afterAll(async () => {
  await Promise.all([writer?.close(), reader?.close(), stranger?.close()]);
  await svc?.stop();
});

describe('svc_create_contact and svc_get_contact', () => {
  it('creates a contact in the agent’s organization, normalizing email and phone', async () => {
    const r = await tool(writer, 'svc_create_contact', {
      first_name: 'Ana',
      last_name: 'Lima',
      email: 'Ana.Lima@Example.com',
      phone: '+55 (11) 98765-4321',
      tags: ['vip', 'vip', ' wholesale '],
      address: { city: 'São Paulo', country: 'BR' },
    });
    expect(r.isError).toBe(false);
    expect(r.body.contact).toMatchObject({
      organization_id: orgOf(owner),
      first_name: 'Ana',
      email: 'ana.lima@example.com',
      phone: '+5511987654321',
      tags: ['vip', 'wholesale'],
      source: 'mcp',
      address: { city: 'São Paulo', country: 'BR' },
    });
    const uk = await tool(writer, 'svc_create_contact', { first_name: 'Uk', phone: '+44 (0)20 7946 0000' });
    expect(uk.body.contact.phone).toBe('+442079460000');
    const got = await tool(reader, 'svc_get_contact', { contact_id: r.body.contact.id });
    expect(got.body.contact).toEqual(r.body.contact);
    expect(got.body.recent_orders).toEqual([]);
  });

  it('refuses an empty contact, a bad phone and a taken email, naming the contact that has it', async () => {
    const empty = await tool(writer, 'svc_create_contact', { notes: 'nobody' });
    expect(empty.body.error).toBe('validation_error');
    const phone = await tool(writer, 'svc_create_contact', { first_name: 'X', phone: '555-1234' });
    expect(phone).toMatchObject({ isError: true, body: { error: 'validation_error' } });
    expect(phone.body.details.issues[0]).toMatchObject({
      path: 'phone',
      message: expect.stringMatching(/country code/),
    });
    const first = await tool(writer, 'svc_create_contact', { email: 'taken@example.com' });
    const again = await tool(writer, 'svc_create_contact', { email: 'TAKEN@example.com', first_name: 'Dup' });
    expect(again).toMatchObject({
      isError: true,
      body: { error: 'duplicate', details: { field: 'email', existing_id: first.body.contact.id } },
    });
  });

  it('never shows or changes another organization’s contact', async () => {
    const mine = await tool(writer, 'svc_create_contact', { first_name: 'Private' });
    const id = mine.body.contact.id;
    const peek = await tool(stranger, 'svc_get_contact', { contact_id: id });
    expect(peek).toMatchObject({ isError: true, body: { error: 'not_found' } });
    expect(JSON.stringify(peek.body)).not.toContain('Private');
    const change = await tool(stranger, 'svc_update_contact', { contact_id: id, first_name: 'Hijacked' });
    expect(change.body.error).toBe('not_found');
    expect((await tool(reader, 'svc_get_contact', { contact_id: id })).body.contact.first_name).toBe(
      'Private',
    );
    const list = await tool(stranger, 'svc_list_contacts', { name: 'Private' });
    expect(list.body.contacts).toEqual([]);
  });

  it('refuses writes to a read-only agent with insufficient_scope, and writes nothing', async () => {
    const r = await tool(reader, 'svc_create_contact', { first_name: 'Sneaky' });
    expect(r).toMatchObject({
      isError: true,
      body: { error: 'insufficient_scope', details: { required_scope: 'write', granted_scopes: ['read'] } },
    });
    expect((await tool(reader, 'svc_list_contacts', { name: 'Sneaky' })).body.contacts).toEqual([]);
  });
});

describe('svc_update_contact', () => {
  it('changes only the fields given, clears with null, and edits tags', async () => {
    const c = (
      await tool(writer, 'svc_create_contact', {
        first_name: 'Bo',
        company: 'Old Co',
        tags: ['a', 'b'],
        notes: 'keep',
      })
    ).body.contact;
    const r = await tool(writer, 'svc_update_contact', {
      contact_id: c.id,
      company: null,
      job_title: 'Buyer',
      add_tags: ['c', 'a'],
      remove_tags: ['b'],
    });
    expect(r.isError).toBe(false);
    expect(r.body.contact).toMatchObject({
      first_name: 'Bo',
      company: null,
      job_title: 'Buyer',
      notes: 'keep',
      tags: ['a', 'c'],
    });
    expect(Date.parse(r.body.contact.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.updated_at));
    const replaced = await tool(writer, 'svc_update_contact', { contact_id: c.id, tags: ['only'] });
    expect(replaced.body.contact.tags).toEqual(['only']);
  });

  it('clears the fields named in clear, and refuses a field both given and cleared', async () => {
    const c = (
      await tool(writer, 'svc_create_contact', { first_name: 'Cy', notes: 'old', address: { city: 'Oslo' } })
    ).body.contact;
    const r = await tool(writer, 'svc_update_contact', { contact_id: c.id, clear: ['notes', 'address'] });
    expect(r.body.contact).toMatchObject({ first_name: 'Cy', notes: null, address: null });
    const both = await tool(writer, 'svc_update_contact', { contact_id: c.id, notes: 'x', clear: ['notes'] });
    expect(both.body).toMatchObject({ error: 'validation_error', details: { issues: [{ path: 'clear' }] } });
  });

  it('refuses an update with nothing to change and one to a taken email', async () => {
    const a = (await tool(writer, 'svc_create_contact', { email: 'first@upd.example' })).body.contact;
    const b = (await tool(writer, 'svc_create_contact', { email: 'second@upd.example' })).body.contact;
    expect((await tool(writer, 'svc_update_contact', { contact_id: a.id })).body.error).toBe(
      'validation_error',
    );
    const clash = await tool(writer, 'svc_update_contact', { contact_id: b.id, email: 'first@upd.example' });
    expect(clash.body).toMatchObject({ error: 'duplicate', details: { existing_id: a.id } });
    // Keeping one's own email is not a clash.
    const same = await tool(writer, 'svc_update_contact', { contact_id: a.id, email: 'FIRST@upd.example' });
    expect(same.isError).toBe(false);
  });
});

describe('svc_list_contacts', () => {
  it('filters by name, email, phone and tag', async () => {
    await tool(writer, 'svc_create_contact', {
      first_name: 'Filtra',
      last_name: 'Bleson',
      email: 'filtra@filter.example',
      phone: '+44 20 7946 0958',
      tags: ['filter-tag'],
    });
    await tool(writer, 'svc_create_contact', { first_name: 'Other', company: 'Filtrable Inc' });
    const names = async (args: Record<string, unknown>) =>
      (await tool(reader, 'svc_list_contacts', args)).body.contacts.map(
        (c: { first_name: string }) => c.first_name,
      );
    expect(await names({ name: 'filtra' })).toEqual(['Other', 'Filtra']);
    expect(await names({ name: 'filtra bles' })).toEqual(['Filtra']);
    expect(await names({ email: 'FILTRA@' })).toEqual(['Filtra']);
    expect(await names({ phone: '7946-0958' })).toEqual(['Filtra']);
    expect(await names({ tag: 'filter-tag' })).toEqual(['Filtra']);
    // LIKE wildcards in the input are taken literally.
    expect(await names({ name: '%' })).toEqual([]);
  });

  it('pages to the end with next_cursor, newest first, each contact once', async () => {
    const tag = `page-${Date.now()}`;
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      made.push(
        (await tool(writer, 'svc_create_contact', { first_name: `P${i}`, tags: [tag] })).body.contact.id,
      );
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await tool(reader, 'svc_list_contacts', { tag, limit: 3, ...(cursor ? { cursor } : {}) });
      expect(r.body.contacts.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.contacts.map((c: { id: string }) => c.id));
      cursor = r.body.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());
  });

  it('pages newest first with ties on created_at broken by id, descending, across page boundaries', async () => {
    // A bulk insert is one statement: its rows share created_at, so only id orders them, and a
    // page boundary falls inside a tie. Two batches, so the order crosses a created_at step too.
    const tag = `tie-${Date.now()}`;
    const batch = async (n: number) => {
      const body = Array.from({ length: n }, (_, i) => ({ first_name: `T${i}`, tags: [tag] }));
      const r = await call(svc, 'POST', '/rest/v1/contacts', {
        token: owner.access_token,
        body,
        headers: { Prefer: 'return=representation' },
      });
      expect(r.status).toBe(201);
      return r.json as { id: string; created_at: string }[];
    };
    const rows = [...(await batch(5)), ...(await batch(5))];
    expect(new Set(rows.map((r) => r.created_at)).size).toBe(2);
    const expected = [...rows]
      .sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || (a.id < b.id ? 1 : -1))
      .map((r) => r.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const r = await tool(reader, 'svc_list_contacts', { tag, limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...r.body.contacts.map((c: { id: string }) => c.id));
      cursor = r.body.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(expected);
  });

  it('refuses a cursor it did not issue', async () => {
    const r = await tool(reader, 'svc_list_contacts', { cursor: 'not-a-cursor' });
    expect(r.body).toMatchObject({ error: 'validation_error', details: { issues: [{ path: 'cursor' }] } });
  });
});

describe('plan ceilings over MCP', () => {
  it('refuses a contact past the plan’s limit with plan_limit_exceeded and writes nothing', async () => {
    const small = await signUp(svc, 'Tiny Ltd');
    await setPlan(svc, small, 'starter');
    const agent = await mcpClient(svc, (await agentToken(svc, small, ['write'])).token);
    // Fill the organization up to the starter ceiling through REST in one bulk insert.
    const rows = Array.from({ length: 500 }, (_, i) => ({ first_name: `c${i}` }));
    const bulk = await call(svc, 'POST', '/rest/v1/contacts', { token: small.access_token, body: rows });
    expect(bulk.status).toBe(201);
    const r = await tool(agent, 'svc_create_contact', { first_name: 'one too many' });
    expect(r).toMatchObject({
      isError: true,
      body: { error: 'plan_limit_exceeded', details: { resource: 'contacts', limit: 500, plan: 'starter' } },
    });
    expect((await tool(agent, 'svc_list_contacts', { name: 'one too many' })).body.contacts).toEqual([]);
    await agent.close();
  });
});
