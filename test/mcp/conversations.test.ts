// svc_send_message and svc_list_conversations through the MCP SDK client, against the fake Graph
// API: the message goes out and is listed; a free plan, a read-only agent, another tenant's
// conversation and a refused send come back as tool errors a model can act on.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { connect } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const PHONE_ID = `3${process.pid}03`;
const TOKEN = 'EAAG-mcp-wa-token';
let graph: FakeGraph;
let svc: TestService;
let owner: Session;
let writer: Client;
let reader: Client;
let freeWriter: Client;
let stranger: Client;

beforeAll(async () => {
  graph = await startFakeGraph({ accounts: { [PHONE_ID]: { token: TOKEN, channel: 'whatsapp' } } });
  svc = await startTestService({ META_GRAPH_URL: graph.url, RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Messaging Ltd');
  await setPlan(svc, owner, 'starter');
  await connect(svc, owner, 'whatsapp', PHONE_ID, TOKEN);
  writer = await mcpClient(svc, (await agentToken(svc, owner, ['write'])).token);
  reader = await mcpClient(svc, (await agentToken(svc, owner, ['read'])).token);
  const free = await signUp(svc, 'Free Ltd');
  freeWriter = await mcpClient(svc, (await agentToken(svc, free, ['write'])).token);
  const other = await signUp(svc, 'Other Ltd');
  await setPlan(svc, other, 'starter');
  stranger = await mcpClient(svc, (await agentToken(svc, other, ['write'])).token);
});
afterAll(async () => {
  await Promise.all([writer, reader, freeWriter, stranger].map((c) => c?.close()));
  await svc?.stop();
  await graph?.close();
});

describe('svc_send_message and svc_list_conversations', () => {
  it('sends a template to a new number, and the conversation is listed with its last message', async () => {
    const sent = await tool(writer, 'svc_send_message', {
      channel: 'whatsapp',
      to: '+1 415 555 0199',
      template: { name: 'order_update', language: 'en_US' },
      idempotency_key: 'mcp-first',
    });
    expect(sent.isError).toBe(false);
    expect(sent.body.message).toMatchObject({ status: 'sent', type: 'template', direction: 'out' });
    expect(graph.requests.at(-1)?.body).toMatchObject({ to: '14155550199', type: 'template' });
    const again = await tool(writer, 'svc_send_message', {
      channel: 'whatsapp',
      to: '+1 415 555 0199',
      template: { name: 'order_update', language: 'en_US' },
      idempotency_key: 'mcp-first',
    });
    expect(again.body.message.id).toBe(sent.body.message.id);

    const listed = await tool(reader, 'svc_list_conversations', { channel: 'whatsapp' });
    expect(listed.isError).toBe(false);
    const [conversation] = listed.body.conversations;
    expect(conversation).toMatchObject({
      id: sent.body.message.conversation_id,
      channel: 'whatsapp',
      last_message: { id: sent.body.message.id, direction: 'out', status: 'sent' },
    });
    expect(listed.body.next_cursor).toBeNull();
    expect((await tool(stranger, 'svc_list_conversations', {})).body.conversations).toEqual([]);
  });

  it('text to a customer who never wrote: outside_messaging_window, with what is allowed instead', async () => {
    const r = await tool(writer, 'svc_send_message', {
      channel: 'whatsapp',
      to: '+14155550198',
      text: 'Hi!',
    });
    expect(r.isError).toBe(true);
    expect(r.body).toMatchObject({ error: 'outside_messaging_window', details: { allowed: ['template'] } });
  });

  it('a free plan: plan_limit_exceeded naming the plan that allows messaging', async () => {
    const r = await tool(freeWriter, 'svc_send_message', {
      channel: 'whatsapp',
      to: '+14155550197',
      template: { name: 'x', language: 'en' },
    });
    expect(r.isError).toBe(true);
    expect(r.body).toMatchObject({
      error: 'plan_limit_exceeded',
      details: { resource: 'outbound_messages', plan: 'free', minimum_plan: 'starter' },
    });
  });

  it('a read-only agent may list but not send; another tenant’s conversation looks missing', async () => {
    const denied = await tool(reader, 'svc_send_message', {
      channel: 'whatsapp',
      to: '+14155550196',
      template: { name: 'x', language: 'en' },
    });
    expect(denied.isError).toBe(true);
    expect(denied.body.error).toBe('insufficient_scope');
    const [conversation] = (await tool(reader, 'svc_list_conversations', {})).body.conversations;
    const foreign = await tool(stranger, 'svc_send_message', {
      channel: 'whatsapp',
      conversation_id: conversation.id,
      template: { name: 'x', language: 'en' },
    });
    expect(foreign.isError).toBe(true);
    expect(foreign.body.error).toBe('not_found');
  });

  it('a refused send is a provider_error carrying Meta’s code; two recipients at once is a validation error', async () => {
    graph.failNext(1, 'token');
    const refused = await tool(writer, 'svc_send_message', {
      channel: 'whatsapp',
      to: '+14155550195',
      template: { name: 'x', language: 'en' },
    });
    expect(refused.body).toMatchObject({ error: 'provider_error', details: { provider_code: 190 } });
    const both = await tool(writer, 'svc_send_message', {
      channel: 'whatsapp',
      to: '+14155550194',
      contact_id: '00000000-0000-4000-8000-000000000000',
      text: 'x',
    });
    expect(both.body.error).toBe('validation_error');
    expect(svc.logs()).not.toContain(TOKEN);
  });
});
