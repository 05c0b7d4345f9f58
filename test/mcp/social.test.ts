// The social tools through the MCP SDK client: a post an agent creates is the one people see at
// /functions/v1/social-posts; the spec's three rules (plan_required with minimum_plan on free,
// write scope for writes, social_not_configured without an account); the lifecycle refused with
// the allowed states; another tenant's post looks missing.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let writer: Client;
let reader: Client;
let freeReader: Client;
let unconfigured: Client;
let stranger: Client;
let page: string;
let seq = 0;

async function connectPage(s: Session) {
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: s.access_token,
    body: {
      provider: 'facebook',
      external_id: `9${process.pid}${++seq}${Date.now()}`,
      access_token: 'EAAG-page',
    },
  });
  return r.json.id as string;
}

async function orgClient(name: string, plan: string, scopes: string[], withPage = true) {
  const s = await signUp(svc, name);
  if (plan !== 'free') await setPlan(svc, s, plan);
  if (withPage) await connectPage(s);
  return mcpClient(svc, (await agentToken(svc, s, scopes)).token);
}

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

beforeAll(async () => {
  svc = await startTestService({ WORKER: 'off', RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Social Ltd');
  await setPlan(svc, owner, 'starter');
  page = await connectPage(owner);
  writer = await mcpClient(svc, (await agentToken(svc, owner, ['write'])).token);
  reader = await mcpClient(svc, (await agentToken(svc, owner, ['read'])).token);
  freeReader = await orgClient('Free Social', 'free', ['read']);
  unconfigured = await orgClient('No Page Ltd', 'starter', ['write'], false);
  stranger = await orgClient('Other Social', 'starter', ['write']);
});
afterAll(async () => {
  await Promise.all([writer, reader, freeReader, unconfigured, stranger].map((c) => c?.close()));
  await svc?.stop();
});

describe('social tools', () => {
  it('a post an agent schedules is the one people see, on the calendar and in the list', async () => {
    const created = await tool(writer, 'svc_create_social_post', {
      platform: 'facebook',
      message: 'New arrivals this week',
      scheduled_at: inDays(3),
    });
    expect(created.isError).toBe(false);
    expect(created.body.post).toMatchObject({ status: 'scheduled', account_id: page });
    expect(created.body.post.created_by).toMatch(/^agent:/);
    const people = await call(svc, 'GET', '/functions/v1/social-posts', { token: owner.access_token });
    expect(people.json.data.map((p: { id: string }) => p.id)).toContain(created.body.post.id);
    const calendar = await tool(reader, 'svc_get_content_calendar', { from: inDays(0), to: inDays(7) });
    expect(
      calendar.body.days.flatMap((d: { posts: { id: string }[] }) => d.posts.map((p) => p.id)),
    ).toContain(created.body.post.id);
    const accounts = await tool(reader, 'svc_list_social_accounts');
    expect(accounts.body.accounts).toEqual([expect.objectContaining({ id: page, provider: 'facebook' })]);
    const listed = await tool(reader, 'svc_list_social_posts', { status: 'scheduled' });
    expect(listed.body.posts.map((p: { id: string }) => p.id)).toContain(created.body.post.id);
  });

  it('answers calendar questions asked in days, and refuses a range given backwards (issue 31 §4)', async () => {
    const { body } = await tool(writer, 'svc_create_social_post', {
      platform: 'facebook',
      message: 'On its day',
      scheduled_at: inDays(5),
    });
    const day = (body.post.scheduled_at as string).slice(0, 10);
    const calendar = await tool(reader, 'svc_get_content_calendar', { from: day, to: day });
    expect(calendar.isError).toBe(false);
    expect(calendar.body.days.map((d: { day: string }) => d.day)).toEqual([day]);
    expect(calendar.body.days[0].posts.map((p: { id: string }) => p.id)).toContain(body.post.id);
    const analytics = await tool(reader, 'svc_get_social_analytics', {
      from: '2026-01-01',
      to: '2026-01-31',
    });
    expect(analytics.isError).toBe(false);
    expect(analytics.body).toMatchObject({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-02-01T00:00:00.000Z',
    });
    for (const name of ['svc_get_content_calendar', 'svc_get_social_analytics', 'svc_list_social_posts']) {
      const reversed = await tool(reader, name, { from: '2026-02-01', to: '2026-01-01' });
      expect(reversed.isError).toBe(true);
      expect(reversed.body.details.issues).toEqual([{ path: 'to', message: expect.stringMatching(/from/) }]);
    }
    const wrong = await tool(reader, 'svc_get_content_calendar', { from: 'yesterday', to: day });
    expect(wrong.body.details.issues[0]).toEqual({
      path: 'from',
      message: expect.stringMatching(/2026-11-27/),
    });
  });

  it('updates, cancels and deletes within the lifecycle; past it, invalid_transition with the allowed states', async () => {
    const { body } = await tool(writer, 'svc_create_social_post', { platform: 'facebook', message: 'Draft' });
    const edited = await tool(writer, 'svc_update_social_post', { id: body.post.id, message: 'Edited' });
    expect(edited.body).toMatchObject({
      post: { message: 'Edited', status: 'draft' },
      previous_status: 'draft',
    });
    await svc.services.db.query(
      "update social_posts set status = 'scheduled', scheduled_at = now() + interval '1 hour' where id = $1",
      [body.post.id],
    );
    await svc.services.db.query("update social_posts set status = 'publishing' where id = $1", [
      body.post.id,
    ]);
    const refused = await tool(writer, 'svc_delete_social_post', { id: body.post.id });
    expect(refused.isError).toBe(true);
    expect(refused.body).toMatchObject({
      error: 'invalid_transition',
      details: { from: 'publishing', to: 'deleted', allowed: ['draft', 'scheduled'] },
    });
    const other = await tool(writer, 'svc_create_social_post', {
      platform: 'facebook',
      message: 'Gone soon',
    });
    expect((await tool(writer, 'svc_delete_social_post', { id: other.body.post.id })).body).toEqual({
      deleted: other.body.post.id,
    });
    expect((await tool(reader, 'svc_get_social_post', { id: other.body.post.id })).body.error).toBe(
      'not_found',
    );
  });

  it('analytics: per platform the posts and summed latest figures; per post its latest figures, also on the post', async () => {
    const published = [];
    for (const [message, views] of [
      ['Sale', 120],
      ['Launch', 80],
    ] as const) {
      const { body } = await tool(writer, 'svc_create_social_post', {
        platform: 'facebook',
        message,
        scheduled_at: inDays(1),
      });
      await svc.services.db.query("update social_posts set status = 'publishing' where id = $1", [
        body.post.id,
      ]);
      await svc.services.db.query(
        "update social_posts set status = 'published', published_at = now() - interval '1 hour' where id = $1",
        [body.post.id],
      );
      // A time series: an older pull, then the newest, which counts.
      await svc.services.db.query(
        `insert into social_post_metrics (organization_id, post_id, metric, value, fetched_at)
         select organization_id, id, 'post_media_view', $2::numeric, now() - interval '30 minutes' from social_posts where id = $1
         union all select organization_id, id, 'post_media_view', $3::numeric, now() from social_posts where id = $1`,
        [body.post.id, views / 2, views],
      );
      published.push(body.post.id);
    }
    const r = await tool(reader, 'svc_get_social_analytics', { from: inDays(-1), to: inDays(1) });
    expect(r.isError).toBe(false);
    expect(r.body.platforms).toEqual([{ platform: 'facebook', posts: 2, totals: { post_media_view: 200 } }]);
    expect(r.body.posts.map((p: { metrics: unknown }) => p.metrics)).toEqual([
      { post_media_view: 80 },
      { post_media_view: 120 },
    ]);
    const one = await tool(reader, 'svc_get_social_post', { id: published[0] });
    expect(one.body.post.metrics).toEqual({ post_media_view: 120 });
    // Another tenant's period is empty.
    expect(
      (await tool(stranger, 'svc_get_social_analytics', { from: inDays(-1), to: inDays(1) })).body.platforms,
    ).toEqual([]);
  });

  it('free: plan_required with minimum_plan starter, even for reads', async () => {
    const r = await tool(freeReader, 'svc_list_social_posts');
    expect(r.isError).toBe(true);
    expect(r.body).toMatchObject({ error: 'plan_required', minimum_plan: 'starter' });
    expect(r.body.message).toMatch(/starter/);
  });

  it('a read-only agent cannot write: insufficient_scope', async () => {
    const r = await tool(reader, 'svc_create_social_post', { platform: 'facebook', message: 'x' });
    expect(r.body).toMatchObject({ error: 'insufficient_scope', details: { required_scope: 'write' } });
  });

  it('without a connected page: social_not_configured, no_connected_account', async () => {
    const r = await tool(unconfigured, 'svc_create_social_post', { platform: 'facebook', message: 'x' });
    expect(r.body).toMatchObject({
      error: 'social_not_configured',
      details: { reason: 'no_connected_account' },
    });
  });

  it('another tenant’s post looks missing', async () => {
    const { body } = await tool(writer, 'svc_create_social_post', { platform: 'facebook', message: 'Mine' });
    for (const name of ['svc_get_social_post', 'svc_update_social_post', 'svc_delete_social_post']) {
      const args =
        name === 'svc_update_social_post' ? { id: body.post.id, message: 'x' } : { id: body.post.id };
      expect((await tool(stranger, name, args)).body.error, name).toBe('not_found');
    }
  });
});
