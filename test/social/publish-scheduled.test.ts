// From scheduling to Meta, through the surfaces people and agents use: a post scheduled over
// /functions/v1/social-posts (and over MCP) a few seconds ahead is published by the worker after
// its time, once; one cancelled back to draft before its time is never published.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { agentToken, mcpClient, tool } from '../helpers/mcp.ts';
import { PAGE, postState, type SocialWorld, settled, socialWorld } from '../helpers/social.ts';

let w: SocialWorld;
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

beforeAll(async () => {
  w = await socialWorld();
});
afterAll(async () => {
  await w?.stop();
});

describe('scheduled posts reach the publisher', () => {
  it('scheduled over the function 3 s ahead: published after its time, once', async () => {
    const r = await call(w.svc, 'POST', '/functions/v1/social-posts', {
      token: w.owner.access_token,
      body: {
        platform: 'facebook',
        account_id: w.facebook,
        message: 'Open late tonight',
        scheduled_at: inSeconds(3),
      },
    });
    expect(r.status).toBe(201);
    const s = await settled(w, r.json.id);
    expect(s.status).toBe('published');
    expect((s.published_at as Date).getTime()).toBeGreaterThanOrEqual((s.scheduled_at as Date).getTime());
    expect(w.graph.published(PAGE).filter((o) => o.text === 'Open late tonight')).toEqual([
      expect.objectContaining({ id: s.provider_post_id }),
    ]);
  });

  it('scheduled by an agent, then cancelled before its time: never published', async () => {
    const agent = await mcpClient(w.svc, (await agentToken(w.svc, w.owner, ['write'])).token);
    const created = await tool(agent, 'svc_create_social_post', {
      platform: 'facebook',
      account_id: w.facebook,
      message: 'Maybe not',
      // Room for the cancel to come first on a loaded machine (at 2 s ahead it once lost the race).
      scheduled_at: inSeconds(10),
    });
    expect(created.body.post.status).toBe('scheduled');
    const cancelled = await tool(agent, 'svc_update_social_post', { id: created.body.post.id, cancel: true });
    expect(cancelled.body.post.status).toBe('draft');
    await agent.close();
    // Well past its old time, with the worker polling every half second.
    const due = new Date(created.body.post.scheduled_at).getTime();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now()) + 3000));
    expect((await postState(w, created.body.post.id)).status).toBe('draft');
    expect(w.graph.published(PAGE).some((o) => o.text === 'Maybe not')).toBe(false);
  });
});
