import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

// What protects: phone numbers are accepted as people type them — spaces, dashes, dots,
// brackets, and national form read with the organization's country (asked when it is created)
// — and stored in E.164, on /rest/v1, the functions and the MCP tools alike (issue 30 §2). An
// organization that has not said its country is asked for the country code, in words.

let svc: TestService;
let us: Session;
let gb: Session;
let unset: Session;

/** A new account whose organization is in `country` (as the dashboard's sign-up form sends it). */
async function signUpIn(name: string, country?: string): Promise<Session> {
  const r = await call(svc, 'POST', '/auth/v1/signup', {
    body: {
      email: uniqueEmail(),
      password: 'password-8',
      data: { organization_name: name, ...(country ? { organization_country: country } : {}) },
    },
  });
  expect(r.status).toBe(200);
  return r.json as Session;
}

beforeAll(async () => {
  svc = await startTestService();
  us = await signUpIn('Corner Shop SF', 'us');
  gb = await signUpIn('Corner Shop London', 'GB');
  unset = await signUp(svc, 'Corner Shop Nowhere');
});
afterAll(() => svc?.stop());

const rest = (s: Session) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${s.access_token}` },
  });

describe('/rest/v1', () => {
  it('stores a national number typed with spaces, brackets or dashes in E.164', async () => {
    for (const [typed, stored] of [
      ['415 555 0102', '+14155550102'],
      ['(415) 555-0103', '+14155550103'],
      ['415.555.0104', '+14155550104'],
      ['+44 (0)20 7123 4567', '+442071234567'],
      ['0044 20 7123 4568', '+442071234568'],
    ]) {
      const { data, error } = await rest(us)
        .from('contacts')
        .insert({ phone: typed })
        .select('phone')
        .single();
      expect(error).toBeNull();
      expect(data).toEqual({ phone: stored });
    }
  });

  it('reads a national number with its own organization’s country, on insert and update', async () => {
    const { data, error } = await rest(gb)
      .from('contacts')
      .insert({ first_name: 'Ada', phone: '020 7123 4569' })
      .select('id, phone')
      .single();
    expect(error).toBeNull();
    expect(data?.phone).toBe('+442071234569');
    const changed = await rest(gb)
      .from('contacts')
      .update({ phone: '07700 900123' })
      .eq('id', data?.id)
      .select('phone')
      .single();
    expect(changed.data).toEqual({ phone: '+447700900123' });
  });

  it('asks an organization without a country for the country code, in words', async () => {
    const { error, status } = await rest(unset).from('contacts').insert({ phone: '415 555 0102' });
    expect(status).toBe(400);
    expect(error?.message).toBe('Enter the phone number with its country code, e.g. +1 415 555 0102');
    expect(error).toMatchObject({ code: '23514', details: { column: 'phone' } });
  });

  it('the organization’s country is shown and can be changed by an owner', async () => {
    const { data } = await rest(unset).from('organizations').select('country').single();
    expect(data).toEqual({ country: null });
    expect(
      (await rest(unset).from('organizations').update({ country: 'DE' }).eq('id', orgOf(unset))).error,
    ).toBeNull();
    const { data: contact } = await rest(unset)
      .from('contacts')
      .insert({ phone: '0151 12345678' })
      .select('phone')
      .single();
    expect(contact).toEqual({ phone: '+4915112345678' });
  });
});

describe('functions and MCP', () => {
  it('organization-create takes the country and answers it', async () => {
    const r = await call(svc, 'POST', '/functions/v1/organization-create', {
      token: us.access_token,
      body: { name: 'Second shop', country: 'fr' },
    });
    expect(r.status).toBe(201);
    expect(r.json.organization.country).toBe('FR');
    const bad = await call(svc, 'POST', '/functions/v1/organization-create', {
      token: us.access_token,
      body: { name: 'Third shop', country: 'Atlantis' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.details.issues[0].path).toBe('country');
  });

  it('an order from the dashboard stores the courier’s and the customer’s numbers in E.164', async () => {
    const r = await call(svc, 'POST', '/functions/v1/orders', {
      token: us.access_token,
      body: {
        address: '1 Main St, San Francisco',
        phone_number: '(415) 555-0110',
        customer_name: 'Grace',
        customer_phone: '415-555-0111',
        items: [{ name: 'Lamp', quantity: 1 }],
      },
    });
    expect(r.status).toBe(201);
    expect(r.json.order.shipping_phone_number).toBe('+14155550110');
    expect(r.json.order.customer_phone).toBe('+14155550111');
  });

  it('a number that is not one for the country says so', async () => {
    const r = await call(svc, 'POST', '/functions/v1/orders', {
      token: us.access_token,
      body: { address: '1 Main St', phone_number: '555 01', items: [{ name: 'Lamp', quantity: 1 }] },
    });
    expect(r.status).toBe(400);
    expect(r.json.details.issues).toEqual([
      { path: 'phone_number', message: expect.stringMatching(/not a phone number of US/) },
    ]);
  });

  it('the MCP tools store national numbers in E.164, with the spec’s input names', async () => {
    await setPlan(svc, gb, 'starter');
    const { token } = await agentToken(svc, gb, ['read', 'write']);
    const client = await mcpClient(svc, token);
    const contact = await tool(client, 'svc_create_contact', { first_name: 'Tom', phone: '020 7946 0001' });
    expect(contact.isError).toBe(false);
    expect(JSON.stringify(contact.body)).toContain('+442079460001');
    const order = await tool(client, 'svc_create_order', {
      address: '10 Downing St, London',
      phone_number: '020-7946-0002',
      items: [{ name: 'Tea', quantity: 2 }],
    });
    expect(order.isError).toBe(false);
    expect(order.body.order.shipping_phone_number).toBe('+442079460002');
    await client.close();
  });
});
