// The fake Stripe sends a webhook event again when the endpoint was not reached or failed (5xx),
// as Stripe does; a refusal (4xx) is an answer. Without it, one reset keep-alive connection lost
// an event for good, and a test waited for a plan that never changed.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeStripe } from '../../../src/dev/fake-stripe/server.ts';

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** An endpoint answering each POST with the next of `statuses` (a 0 resets the connection). */
async function endpoint(statuses: number[]) {
  const seen: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    const status = statuses[seen.length] ?? 200;
    seen.push(status);
    if (status === 0) req.socket.destroy();
    else res.writeHead(status).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, seen };
}

describe('the fake Stripe’s webhook deliveries', () => {
  it('sends an event again after a reset connection and a 503, until it is taken', async () => {
    const hook = await endpoint([0, 503, 200]);
    const fake = await startFakeStripe({
      secretKey: 'sk_test_x',
      webhookSecret: 'whsec_test',
      webhookUrl: hook.url,
    });
    closers.push(() => fake.close());
    expect(await fake.deliver({ id: 'evt_1', type: 'customer.subscription.deleted' } as never)).toBe(200);
    expect(hook.seen).toEqual([0, 503, 200]);
  });

  it('takes a refusal (4xx) as the answer: the event is not sent again', async () => {
    const hook = await endpoint([400]);
    const fake = await startFakeStripe({
      secretKey: 'sk_test_x',
      webhookSecret: 'whsec_test',
      webhookUrl: hook.url,
    });
    closers.push(() => fake.close());
    expect(await fake.deliver({ id: 'evt_2', type: 'customer.subscription.deleted' } as never)).toBe(400);
    expect(hook.seen).toEqual([400]);
  });
});
