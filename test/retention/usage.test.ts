// How long data is kept, where agents and owners look: agent-usage's `retention` and
// svc://organization/info's, from the organization's plan (free 30 days, scale 2,555), following
// a plan change. Short on purpose: agents pay per token.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
beforeAll(async () => {
  svc = await startTestService({ WORKER: 'off' });
  owner = await signUp(svc, 'Retention Readers Ltd');
});
afterAll(() => svc?.stop());

const usage = async (token: string) => {
  const r = await call(svc, 'GET', '/functions/v1/agent-usage', { token });
  expect(r.status).toBe(200);
  return r.json;
};

describe('data retention in agent-usage and svc://organization/info', () => {
  it('says how many days the plan keeps data and what the daily purge deletes, and follows a plan change', async () => {
    const { token } = await agentToken(svc, owner, ['read']);
    expect((await usage(token)).retention).toEqual({
      days: 30,
      message:
        'Finished orders, published or failed social posts, conversations, messages, webhook events and agent sign-in logs older than 30 days are deleted daily; contacts and inventory are kept.',
    });
    expect((await usage(owner.access_token)).retention.days).toBe(30);

    await setPlan(svc, owner, 'scale');
    expect((await usage(token)).retention).toMatchObject({
      days: 2555,
      message: expect.stringContaining('2555 days'),
    });

    const client = await mcpClient(svc, token);
    try {
      const { contents } = await client.readResource({ uri: 'svc://organization/info' });
      const info = JSON.parse((contents[0] as { text: string }).text);
      expect(info.retention).toMatchObject({ days: 2555 });
      expect(info.plan.limits.data_retention_days).toBe(2555);
    } finally {
      await client.close();
    }
  });
});
