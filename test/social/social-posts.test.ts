// The social calendar for people over /functions/v1/social-posts and content-calendar, and at
// /rest/v1 (reads only): drafts and scheduled posts, edits, cancel and delete within the lifecycle
// (refused past it with the allowed states), the plan and configuration errors, platforms that
// cannot be written, and the calendar grouped by a time zone's own days.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let page: string;
let seq = 0;

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const posts = (s: Session, method: string, body?: unknown, query = '') =>
  call(svc, method, `/functions/v1/social-posts${query}`, { token: s.access_token, body });

async function connectPage(s: Session) {
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: s.access_token,
    body: {
      provider: 'facebook',
      external_id: `${Date.now()}${process.pid}${++seq}`,
      access_token: 'EAAG-page',
    },
  });
  expect(r.status).toBe(201);
  return r.json.id as string;
}

beforeAll(async () => {
  svc = await startTestService({ WORKER: 'off' });
  owner = await signUp(svc, 'Calendar shop');
  await setPlan(svc, owner, 'starter');
  page = await connectPage(owner);
});
afterAll(async () => {
  await svc?.stop();
});

describe('posts', () => {
  it('creates a draft, schedules it, cancels it back to a draft without a time, and deletes it', async () => {
    const draft = await posts(owner, 'POST', { platform: 'facebook', message: 'Autumn sale starts Friday' });
    expect(draft.status).toBe(201);
    expect(draft.json).toMatchObject({
      status: 'draft',
      platform: 'facebook',
      account_id: page,
      scheduled_at: null,
      media: [],
    });
    expect(draft.json.created_by).toMatch(/^user:/);
    const when = inDays(2);
    const scheduled = await posts(owner, 'PATCH', { id: draft.json.id, scheduled_at: when });
    expect(scheduled.json).toMatchObject({ status: 'scheduled' });
    expect(Date.parse(scheduled.json.scheduled_at)).toBe(Date.parse(when));
    const cancelled = await posts(owner, 'PATCH', { id: draft.json.id, cancel: true });
    expect(cancelled.json).toMatchObject({ status: 'draft', scheduled_at: null });
    const deleted = await posts(owner, 'DELETE', { id: draft.json.id });
    expect(deleted.status).toBe(200);
    expect((await posts(owner, 'DELETE', { id: draft.json.id })).status).toBe(404);
  });

  it('refuses a schedule in the past or over a year ahead, and a post with nothing in it', async () => {
    for (const scheduled_at of [inDays(-1), inDays(400)]) {
      const r = await posts(owner, 'POST', { platform: 'facebook', message: 'x', scheduled_at });
      expect(r.status).toBe(400);
      expect(r.json.details.issues[0].path).toBe('scheduled_at');
    }
    expect((await posts(owner, 'POST', { platform: 'facebook' })).status).toBe(400);
  });

  it('refuses twitter and linkedin with the reason; an unknown account is named', async () => {
    const r = await posts(owner, 'POST', { platform: 'twitter', message: 'hi' });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/Only Facebook posts \(and Instagram posts/);
    const other = await posts(owner, 'POST', {
      platform: 'facebook',
      message: 'hi',
      account_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(other.json.details.issues[0]).toMatchObject({ path: 'account_id' });
  });

  it('a published post can be neither edited, cancelled nor deleted: 409 invalid_transition with the allowed states', async () => {
    const r = await posts(owner, 'POST', {
      platform: 'facebook',
      message: 'Live now',
      scheduled_at: inDays(1),
    });
    // The publisher's moves, on the service path.
    await svc.services.db.query("update social_posts set status = 'publishing' where id = $1", [r.json.id]);
    await svc.services.db.query(
      "update social_posts set status = 'published', published_at = now(), provider_post_id = '1_2' where id = $1",
      [r.json.id],
    );
    // Editing and deleting name the states that allow them; a move names where it could go (nowhere).
    for (const [method, body, to, allowed] of [
      ['PATCH', { id: r.json.id, message: 'edited' }, 'published', ['draft', 'scheduled']],
      ['PATCH', { id: r.json.id, cancel: true }, 'draft', []],
      ['DELETE', { id: r.json.id }, 'deleted', ['draft', 'scheduled']],
    ] as const) {
      const refused = await posts(owner, method, body);
      expect(refused.status).toBe(409);
      expect(refused.json).toMatchObject({
        error: 'invalid_transition',
        details: { from: 'published', to, allowed },
      });
    }
    const [row] = await svc.services.db.query<{ message: string }>(
      'select message from social_posts where id = $1',
      [r.json.id],
    );
    expect(row?.message).toBe('Live now');
  });

  it('lists newest first in the list envelope, filtered by status', async () => {
    const r = await posts(owner, 'GET', undefined, '?status=draft&per_page=2');
    expect(r.status).toBe(200);
    expect(r.json.pagination).toMatchObject({ page: 1, per_page: 2 });
    for (const p of r.json.data) expect(p.status).toBe('draft');
  });
});

describe('/rest/v1', () => {
  it('reads posts under RLS, and refuses writes with where to go instead', async () => {
    const read = await call(svc, 'GET', '/rest/v1/social_posts?select=id,status', {
      token: owner.access_token,
    });
    expect(read.status).toBe(200);
    expect(read.json.length).toBeGreaterThan(0);
    const write = await call(svc, 'POST', '/rest/v1/social_posts', {
      token: owner.access_token,
      body: { platform: 'facebook', message: 'sneaky' },
    });
    expect(write.status).toBe(403);
    expect(write.json.message).toMatch(/functions\/v1\/social-posts/);
  });
});

describe('plans and configuration', () => {
  it('free: plan_required with minimum_plan starter; no account: social_not_configured', async () => {
    const free = await signUp(svc, 'Free calendar');
    const refused = await posts(free, 'GET');
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ error: 'plan_required', minimum_plan: 'starter' });
    await setPlan(svc, free, 'starter');
    const unconfigured = await posts(free, 'GET');
    expect(unconfigured.status).toBe(409);
    expect(unconfigured.json).toMatchObject({
      error: 'social_not_configured',
      details: { reason: 'no_connected_account' },
    });
    expect(unconfigured.json.message).toMatch(/connected-accounts/);
  });

  it('another organization’s post is not found', async () => {
    const other = await signUp(svc, 'Other calendar');
    await setPlan(svc, other, 'starter');
    await connectPage(other);
    const mine = await posts(owner, 'POST', { platform: 'facebook', message: 'mine' });
    expect((await posts(other, 'PATCH', { id: mine.json.id, message: 'theirs' })).status).toBe(404);
    expect((await posts(other, 'DELETE', { id: mine.json.id })).status).toBe(404);
    expect(orgOf(other)).not.toBe(orgOf(owner));
  });
});

describe('content-calendar', () => {
  it('groups by the time zone’s own days: 23:30 UTC is the next day in Tokyo and the same day in New York', async () => {
    const at = new Date(Date.now() + 3 * 86_400_000);
    at.setUTCHours(23, 30, 0, 0);
    const created = await posts(owner, 'POST', {
      platform: 'facebook',
      message: 'late',
      scheduled_at: at.toISOString(),
    });
    expect(created.status).toBe(201);
    const from = new Date(at.getTime() - 2 * 86_400_000).toISOString();
    const to = new Date(at.getTime() + 2 * 86_400_000).toISOString();
    const dayOf = async (timezone: string) => {
      const r = await call(
        svc,
        'GET',
        `/functions/v1/content-calendar?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&timezone=${encodeURIComponent(timezone)}`,
        { token: owner.access_token },
      );
      expect(r.status).toBe(200);
      return r.json.days.find((d: { posts: { id: string }[] }) =>
        d.posts.some((p) => p.id === created.json.id),
      )?.day;
    };
    const utcDay = at.toISOString().slice(0, 10);
    const nextDay = new Date(at.getTime() + 86_400_000).toISOString().slice(0, 10);
    expect(await dayOf('UTC')).toBe(utcDay);
    expect(await dayOf('Asia/Tokyo')).toBe(nextDay);
    expect(await dayOf('America/New_York')).toBe(utcDay);
    const bad = await call(
      svc,
      'GET',
      `/functions/v1/content-calendar?from=${from}&to=${to}&timezone=Mars/Base`,
      {
        token: owner.access_token,
      },
    );
    expect(bad.status).toBe(400);
  });
});
