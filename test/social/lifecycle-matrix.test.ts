// Every lifecycle move on every write path: each status × each action (edit, schedule, cancel,
// delete) through /functions/v1/social-posts, the MCP tools and plain /rest/v1. The database's
// guard (migrations/0022) decides for all three, so the functions and the tools must agree row for
// row: allowed moves succeed, the others are 409 invalid_transition with {from, to, allowed} and
// leave the post as it was; /rest/v1 refuses every write with 403 whatever the status.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const STATUSES = ['draft', 'scheduled', 'publishing', 'published', 'failed'] as const;
const ACTIONS = ['edit', 'schedule', 'cancel', 'delete'] as const;
type Status = (typeof STATUSES)[number];
type Action = (typeof ACTIONS)[number];
type Outcome = { ok: Status | 'deleted' } | { refused: { from: Status; to: string; allowed: string[] } };

const EDITABLE = ['draft', 'scheduled'];
/**
 * decisions.md "Social posts": content, schedule and deletion only while draft or scheduled. A
 * refused edit or delete names the states that allow it; a refused move names where the post could
 * go, and a caller can move a publishing, published or failed post nowhere. Cancelling a draft
 * leaves it a draft (nothing to cancel, nothing refused).
 */
function expected(from: Status, action: Action): Outcome {
  const open = EDITABLE.includes(from);
  switch (action) {
    case 'edit':
      return open ? { ok: from } : { refused: { from, to: from, allowed: EDITABLE } };
    case 'schedule':
      return open ? { ok: 'scheduled' } : { refused: { from, to: 'scheduled', allowed: [] } };
    case 'cancel':
      return open ? { ok: 'draft' } : { refused: { from, to: 'draft', allowed: [] } };
    case 'delete':
      return open ? { ok: 'deleted' } : { refused: { from, to: 'deleted', allowed: EDITABLE } };
  }
}

let svc: TestService;
let owner: Session;
let writer: Client;
let page: string;

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

beforeAll(async () => {
  svc = await startTestService({ WORKER: 'off', RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Lifecycle Matrix');
  await setPlan(svc, owner, 'starter');
  const account = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: owner.access_token,
    body: { provider: 'facebook', external_id: `7${process.pid}${Date.now()}`, access_token: 'EAAG-page' },
  });
  page = account.json.id;
  writer = await mcpClient(svc, (await agentToken(svc, owner, ['write'])).token);
});
afterAll(async () => {
  await writer?.close();
  await svc?.stop();
});

/** A post in `status`, brought there by the moves the publisher makes on the service path. */
async function postIn(status: Status): Promise<string> {
  const db = svc.services.db;
  const [row] = await db.query<{ id: string }>(
    `insert into public.social_posts (organization_id, platform, account_id, status, message, scheduled_at)
     values ($1, 'facebook', $2, $3, 'Matrix', $4) returning id`,
    [orgOf(owner), page, status === 'draft' ? 'draft' : 'scheduled', status === 'draft' ? null : inDays(1)],
  );
  const id = (row as { id: string }).id;
  const move = (set: string) => db.query(`update public.social_posts set ${set} where id = $1`, [id]);
  if (status === 'scheduled' || status === 'draft') return id;
  await move(`status = 'publishing'`);
  if (status === 'published')
    await move(`status = 'published', published_at = now(), provider_post_id = '1_${Date.now()}'`);
  if (status === 'failed') await move(`status = 'failed', error = '{"code": 190, "message": "expired"}'`);
  return id;
}

const CHANGES: Record<Exclude<Action, 'delete'>, (id: string) => Record<string, unknown>> = {
  edit: (id) => ({ id, message: 'Edited' }),
  schedule: (id) => ({ id, scheduled_at: inDays(2) }),
  cancel: (id) => ({ id, cancel: true }),
};
/** The same intents as plain row writes. */
const REST_CHANGES: Record<Exclude<Action, 'delete'>, Record<string, unknown>> = {
  edit: { message: 'Edited' },
  schedule: { status: 'scheduled', scheduled_at: inDays(2) },
  cancel: { status: 'draft', scheduled_at: null },
};

type Answer = { ok: true; status: Status | 'deleted' } | { ok: false; body: Record<string, unknown> };

const PATHS: Record<'functions' | 'mcp', (id: string, action: Action) => Promise<Answer>> = {
  async functions(id, action) {
    const body = action === 'delete' ? { id } : CHANGES[action](id);
    const r = await call(svc, action === 'delete' ? 'DELETE' : 'PATCH', '/functions/v1/social-posts', {
      token: owner.access_token,
      body,
    });
    if (r.status === 200) return { ok: true, status: action === 'delete' ? 'deleted' : r.json.status };
    expect(r.status, JSON.stringify(r.json)).toBe(409);
    return { ok: false, body: r.json };
  },
  async mcp(id, action) {
    const r =
      action === 'delete'
        ? await tool(writer, 'svc_delete_social_post', { id })
        : await tool(writer, 'svc_update_social_post', CHANGES[action](id));
    if (r.isError) return { ok: false, body: r.body };
    if (action === 'delete') expect(r.body.deleted).toBe(id);
    return { ok: true, status: action === 'delete' ? 'deleted' : r.body.post.status };
  },
};

async function stored(id: string) {
  const [row] = await svc.services.db.query<{ status: Status; message: string }>(
    'select status, message from public.social_posts where id = $1',
    [id],
  );
  return row;
}

describe.each(Object.keys(PATHS) as (keyof typeof PATHS)[])('through %s', (path) => {
  it.each(STATUSES)('a %s post: every action allowed or refused as the lifecycle says', async (from) => {
    for (const action of ACTIONS) {
      const id = await postIn(from);
      const want = expected(from, action);
      const got = await PATHS[path](id, action);
      const row = await stored(id);
      if ('ok' in want) {
        expect(got, `${from} ${action}`).toEqual({ ok: true, status: want.ok });
        expect(row?.status, `${from} ${action}`).toBe(want.ok === 'deleted' ? undefined : want.ok);
        if (action === 'edit') expect(row?.message).toBe('Edited');
      } else {
        expect(got, `${from} ${action}`).toMatchObject({
          ok: false,
          body: { error: 'invalid_transition', details: want.refused },
        });
        expect(row, `${from} ${action}`).toEqual({ status: from, message: 'Matrix' });
      }
    }
  });
});

describe('through /rest/v1', () => {
  it.each(STATUSES)('a %s post: every write is 403 and changes nothing', async (from) => {
    for (const action of ACTIONS) {
      const id = await postIn(from);
      const r = await call(
        svc,
        action === 'delete' ? 'DELETE' : 'PATCH',
        `/rest/v1/social_posts?id=eq.${id}`,
        action === 'delete'
          ? { token: owner.access_token }
          : { token: owner.access_token, body: REST_CHANGES[action] },
      );
      expect(r.status, `${from} ${action}`).toBe(403);
      expect(r.json.message).toMatch(/functions\/v1\/social-posts/);
      expect(await stored(id), `${from} ${action}`).toEqual({ status: from, message: 'Matrix' });
    }
  });
});
