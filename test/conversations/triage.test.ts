import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken } from '../helpers/mcp.ts';
import { connect, inbound } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// Inbox triage over /rest/v1 (migration 0026): a conversation's status, and its unread count
// back to 0. Nothing else about a conversation is the caller's to write.

let svc: TestService;
let owner: Session;
let conversationId: string;
let foreignId: string;

const rest = (token: string) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${token}` },
  });
const row = async (id: string) =>
  (
    await svc.services.db.query<{ status: string; unread_count: number; channel: string }>(
      'select status, unread_count, channel from conversations where id = $1',
      [id],
    )
  )[0];

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Triage shop');
  const account = await connect(svc, owner, 'whatsapp', `pn-${process.pid}-1`, 'token-1');
  for (const h of [3, 2, 1])
    ({ conversationId } = await inbound(svc, 'whatsapp', orgOf(owner), account.id, '15550001', h));
  const other = await signUp(svc, 'Other shop');
  const otherAccount = await connect(svc, other, 'whatsapp', `pn-${process.pid}-2`, 'token-2');
  foreignId = (await inbound(svc, 'whatsapp', orgOf(other), otherAccount.id, '15550002', 1)).conversationId;
});
afterAll(() => svc?.stop());

describe('triaging a conversation over /rest/v1', () => {
  it('a member marks it read and resolves it', async () => {
    expect((await row(conversationId))?.unread_count).toBe(3);
    const member = await signUp(svc);
    const db = rest(await inviteAndAccept(svc, owner, member, 'member'));
    const read = await db
      .from('conversations')
      .update({ unread_count: 0 })
      .eq('id', conversationId)
      .select('unread_count');
    expect(read.error).toBeNull();
    expect(read.data).toEqual([{ unread_count: 0 }]);
    const resolved = await db
      .from('conversations')
      .update({ status: 'resolved' })
      .eq('id', conversationId)
      .select('status');
    expect(resolved.data).toEqual([{ status: 'resolved' }]);
    expect(await row(conversationId)).toMatchObject({ status: 'resolved', unread_count: 0 });
  });

  it('the unread count only goes back to 0, the status only to one of the four, and nothing else changes', async () => {
    const db = rest(owner.access_token);
    const up = await db.from('conversations').update({ unread_count: 7 }).eq('id', conversationId);
    expect(up.status).toBe(400);
    expect(up.error).toMatchObject({ message: expect.stringMatching(/only be reset to 0/) });
    const bad = await db.from('conversations').update({ status: 'closed' }).eq('id', conversationId);
    expect(bad.status).toBe(400);
    const other = await db.from('conversations').update({ channel: 'messenger' }).eq('id', conversationId);
    expect([401, 403]).toContain(other.status);
    expect(await row(conversationId)).toMatchObject({
      status: 'resolved',
      unread_count: 0,
      channel: 'whatsapp',
    });
  });

  it('another tenant’s conversation looks missing and stays as it was', async () => {
    const r = await rest(owner.access_token)
      .from('conversations')
      .update({ status: 'snoozed', unread_count: 0 })
      .eq('id', foreignId)
      .select('id');
    expect(r.data).toEqual([]);
    expect(await row(foreignId)).toMatchObject({ status: 'open', unread_count: 1 });
  });

  it('an agent needs the write scope', async () => {
    await svc.services.db.query("update organizations set plan = 'starter' where id = $1", [orgOf(owner)]);
    const reader = rest((await agentToken(svc, owner, ['read'])).token);
    const r = await reader
      .from('conversations')
      .update({ status: 'pending' })
      .eq('id', conversationId)
      .select('id');
    expect(r.data ?? []).toEqual([]);
    expect((await row(conversationId))?.status).toBe('resolved');
    const writer = rest((await agentToken(svc, owner, ['write'])).token);
    const w = await writer
      .from('conversations')
      .update({ status: 'pending' })
      .eq('id', conversationId)
      .select('status');
    expect(w.data).toEqual([{ status: 'pending' }]);
  });
});
