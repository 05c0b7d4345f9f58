// The social calendar for people over /functions/v1/social-posts and content-calendar, and at
// /rest/v1 (reads only): drafts and scheduled posts, edits, cancel and delete within the lifecycle
// (refused past it with the allowed states), the plan and configuration errors, platforms that
// cannot be written, and the calendar grouped by a time zone's own days.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { html, jpeg, png } from '../fakes/media/samples.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let media: Server;
let origin: string;
const FILES: Record<string, Uint8Array> = {
  '/shirt.jpg': jpeg(),
  '/named.jpg': png(40, 30),
  '/page': html(),
};
let page: string;
let seq = 0;
// Requests to /hang/… are never answered: the media import's deadline and cancellation.
const hanging = { open: 0, most: 0, started: 0 };
let allClosed: () => void = () => {};

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
  // A local media server, allowed as the development setting allows one.
  media = createServer((req, res) => {
    if (req.url?.startsWith('/hang/')) {
      hanging.started++;
      hanging.most = Math.max(hanging.most, ++hanging.open);
      req.on('close', () => {
        if (--hanging.open === 0) allClosed();
      });
      return;
    }
    const file = FILES[req.url ?? ''];
    res.writeHead(file ? 200 : 404, { 'content-type': 'image/jpeg' });
    res.end(file);
  });
  await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(media.address() as AddressInfo).port}`;
  origin = `http://${host}`;
  svc = await startTestService({
    WORKER: 'off',
    MEDIA_FETCH_ALLOW_HOSTS: host,
    MEDIA_FETCH_TIMEOUT_MS: '1500',
  });
  owner = await signUp(svc, 'Calendar shop');
  await setPlan(svc, owner, 'starter');
  page = await connectPage(owner);
});
afterAll(async () => {
  await svc?.stop();
  await new Promise((resolve) => media?.close(resolve));
});

/** The organization's files in the bucket, as the store lists them. */
const files = async (s: Session) =>
  (await svc.services.storage.list(`social-media/${orgOf(s)}/posts`, { limit: 100, offset: 0 })).map(
    (f) => f.name,
  );

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

describe('media', () => {
  it('downloads media_urls into the organization’s folder in order, typed by content; deleting the post removes the files', async () => {
    const before = await files(owner);
    const r = await posts(owner, 'POST', {
      platform: 'facebook',
      message: 'Two photos',
      media_urls: [`${origin}/shirt.jpg`, `${origin}/named.jpg`],
    });
    expect(r.status).toBe(201);
    expect(r.json.media).toEqual([
      expect.objectContaining({ position: 1, mime_type: 'image/jpeg', source_url: `${origin}/shirt.jpg` }),
      // Served as image/jpeg under a .jpg name; its bytes say PNG.
      expect.objectContaining({ position: 2, mime_type: 'image/png', width: 40, height: 30 }),
    ]);
    for (const m of r.json.media) expect(m.storage_path).toMatch(new RegExp(`^${orgOf(owner)}/posts/`));
    expect((await files(owner)).length).toBe(before.length + 2);
    // An agent reads the post with a link to each file, which works without a token.
    const agent = await mcpClient(svc, (await agentToken(svc, owner, ['read'])).token);
    const read = await tool(agent, 'svc_get_social_post', { id: r.json.id });
    await agent.close();
    const first = read.body.post.media[0];
    expect(first.signed_url).toMatch(/\/storage\/v1\/object\/sign\/social-media\/.+\?token=/);
    const download = await fetch(first.signed_url);
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(FILES['/shirt.jpg']);
    await posts(owner, 'DELETE', { id: r.json.id });
    expect(await files(owner)).toEqual(before);
  });

  it('one refused URL refuses the post, naming the URL and why; no post and no file are left', async () => {
    const before = await files(owner);
    const count = async () =>
      (await svc.services.db.query('select 1 from social_posts where message = $1', ['Refused'])).length;
    for (const bad of [`${origin}/page`, `${origin}/missing.jpg`, 'http://example.invalid/a.jpg']) {
      const r = await posts(owner, 'POST', {
        platform: 'facebook',
        message: 'Refused',
        media_urls: [`${origin}/shirt.jpg`, bad],
      });
      expect(r.status, bad).toBe(400);
      expect(r.json.details.issues[0]).toMatchObject({ path: 'media_urls.1' });
      expect(r.json.details.issues[0].message).toContain(bad);
    }
    expect(await count()).toBe(0);
    expect(await files(owner)).toEqual(before);
  });
});

describe('media_urls of the service’s own bucket with a path that names no file', () => {
  const spellings = ['..%2fx.png', 'x%00.png', '/x.png', '%5c.png'];
  const bad = (s: Session) =>
    spellings.map((tail) => `${svc.url}/storage/v1/object/social-media/${orgOf(s)}/${tail}`);

  it('are refused with 400 naming the URL, at /functions/v1/social-posts and by the MCP tools', async () => {
    const before = await files(owner);
    const agent = await mcpClient(svc, (await agentToken(svc, owner, ['write'])).token);
    try {
      for (const url of bad(owner)) {
        const r = await posts(owner, 'POST', { platform: 'facebook', message: 'Own', media_urls: [url] });
        expect(r.status, url).toBe(400);
        expect(r.json.error).toBe('validation_error');
        expect(r.json.details.issues[0]).toMatchObject({ path: 'media_urls.0' });
        expect(r.json.details.issues[0].message).toContain(url);

        const made = await tool(agent, 'svc_create_social_post', {
          platform: 'facebook',
          message: 'Own',
          media_urls: [url],
        });
        expect(made.isError, url).toBe(true);
        expect(made.body).toMatchObject({ error: 'validation_error' });
        expect(made.body.details.issues[0].message).toContain(url);
      }
      const draft = await posts(owner, 'POST', { platform: 'facebook', message: 'To edit' });
      for (const url of bad(owner)) {
        const r = await posts(owner, 'PATCH', { id: draft.json.id, media_urls: [url] });
        expect(r.status, url).toBe(400);
        expect(r.json.details.issues[0].message).toContain(url);
        const edited = await tool(agent, 'svc_update_social_post', { id: draft.json.id, media_urls: [url] });
        expect(edited.body).toMatchObject({ error: 'validation_error' });
      }
    } finally {
      await agent.close();
    }
    expect(await files(owner)).toEqual(before);
  });
});

describe('slow media_urls', () => {
  const slow = (n: number) => Array.from({ length: n }, (_, i) => `${origin}/hang/${seq}-${i}.jpg`);
  const closed = () =>
    new Promise<void>((resolve) => {
      allClosed = resolve;
      if (hanging.open === 0) resolve();
    });

  it('share one deadline: ten that never answer are fetched side by side, refused together, nothing kept', async () => {
    const before = await files(owner);
    Object.assign(hanging, { most: 0, started: 0 });
    const urls = slow(10);
    const r = await posts(owner, 'POST', { platform: 'facebook', message: 'Slow', media_urls: urls });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('validation_error');
    expect(r.json.details.issues[0].message).toMatch(/not fetched within 1500 ms, the time allowed for all/);
    // Several downloads were open at once (MEDIA_FETCH_CONCURRENCY, 4 by default), not one by one.
    expect(hanging.most).toBe(4);
    // Those not yet started when the deadline passed never start; those open are cut.
    expect(hanging.started).toBe(4);
    await closed();
    expect(await files(owner)).toEqual(before);
    const made = await svc.services.db.query('select 1 from social_posts where message = $1', ['Slow']);
    expect(made).toEqual([]);
  });

  it('one refused URL cancels the downloads still running and answers at once, naming it', async () => {
    const before = await files(owner);
    Object.assign(hanging, { most: 0, started: 0 });
    const [a, b, c] = slow(3);
    const urls = [a, b, `${origin}/shirt.jpg`, `${origin}/missing.jpg`, c];
    const r = await posts(owner, 'POST', { platform: 'facebook', message: 'Cancelled', media_urls: urls });
    expect(r.status).toBe(400);
    expect(r.json.details.issues[0]).toMatchObject({ path: 'media_urls.3' });
    expect(r.json.details.issues[0].message).toContain('HTTP 404');
    // The two open downloads were cancelled by the failure, not left to the deadline.
    expect(r.json.details.issues[0].message).not.toMatch(/within/);
    await closed();
    expect(await files(owner)).toEqual(before);
  });
});

describe('links', () => {
  const scripts = [
    'javascript:alert(document.cookie)',
    'JavaScript:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'ftp://files.example.com/a',
  ];

  it('only http(s) addresses are links: functions and MCP tools refuse anything else with 400', async () => {
    const agent = await mcpClient(svc, (await agentToken(svc, owner, ['write'])).token);
    const draft = await posts(owner, 'POST', {
      platform: 'facebook',
      message: 'Linked',
      link: 'https://shop.example.com/sale',
    });
    expect(draft.status).toBe(201);
    expect(draft.json.link).toBe('https://shop.example.com/sale');
    try {
      for (const link of scripts) {
        const made = await posts(owner, 'POST', { platform: 'facebook', message: 'Script', link });
        expect(made.status, link).toBe(400);
        expect(made.json.details.issues).toEqual([
          expect.objectContaining({
            path: 'link',
            message: expect.stringMatching(/http:\/\/ or https:\/\//),
          }),
        ]);
        const edited = await posts(owner, 'PATCH', { id: draft.json.id, link });
        expect(edited.status, link).toBe(400);
        const viaTool = await tool(agent, 'svc_create_social_post', {
          platform: 'facebook',
          message: 'x',
          link,
        });
        expect(viaTool.isError, link).toBe(true);
        expect(JSON.stringify(viaTool.body)).toMatch(/http:\/\/ or https:\/\//);
        const toolEdit = await tool(agent, 'svc_update_social_post', { id: draft.json.id, link });
        expect(toolEdit.isError, link).toBe(true);
      }
    } finally {
      await agent.close();
    }
    const [kept] = await svc.services.db.query<{ link: string }>(
      'select link from social_posts where id = $1',
      [draft.json.id],
    );
    expect(kept?.link).toBe('https://shop.example.com/sale');
    const scripted = await svc.services.db.query('select 1 from social_posts where message = $1', ['Script']);
    expect(scripted).toEqual([]);
  });

  it('the database refuses such a link on any other path (the service role at /rest/v1)', async () => {
    for (const link of ['javascript:alert(1)', 'data:text/html,x', ' https://padded.example.com']) {
      const r = await call(svc, 'POST', '/rest/v1/social_posts', {
        token: svc.serviceRoleKey,
        body: { organization_id: orgOf(owner), platform: 'facebook', message: 'Service', link },
      });
      expect(r.status, link).toBe(400);
      expect(r.json.code).toBe('23514');
    }
    const ok = await call(svc, 'POST', '/rest/v1/social_posts', {
      token: svc.serviceRoleKey,
      body: {
        organization_id: orgOf(owner),
        platform: 'facebook',
        message: 'Service',
        link: 'http://a.example',
      },
    });
    expect(ok.status).toBe(201);
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
      details: { reason: 'no_connected_account', connect: '/functions/v1/connected-accounts' },
    });
    // People read where to connect in the dashboard's words; programs read the path in details.
    expect(unconfigured.json.message).toMatch(/Settings, Connected accounts/);
    expect(unconfigured.json.message).not.toMatch(/functions\/v1/);
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
