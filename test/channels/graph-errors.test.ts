// How the Graph client reports failures, over real HTTP against the fake Graph API: every class of
// answer Meta gives (throttling, downtime, bad token, bad recipient, closed window, bad parameter)
// and every way of getting none (timeout, dropped connection, nobody listening) becomes transient
// (the send flow retries) or permanent (the message fails with Meta's code). A wrong call here
// either retries a message that can never go, or gives up on one that would have. And the
// account's token never appears in what comes back.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createGraphClient,
  type GraphAccount,
  type GraphClient,
  type GraphResult,
} from '../../src/channels/graph-client.ts';
import {
  type FailKind,
  type FakeChannel,
  type FakeGraph,
  type Fault,
  startFakeGraph,
} from '../fakes/graph/index.ts';

const ACCOUNTS: Record<FakeChannel, GraphAccount> = {
  whatsapp: { externalId: '106540352242922', accessToken: 'EAAsecret-whatsapp-token' },
  messenger: { externalId: '105954558954427', accessToken: 'EAAsecret-page-token' },
  instagram: { externalId: '17841405822304914', accessToken: 'IGAAsecret-ig-token' },
};

let fake: FakeGraph;
let graph: GraphClient;

beforeAll(async () => {
  fake = await startFakeGraph({
    accounts: Object.fromEntries(
      Object.entries(ACCOUNTS).map(([channel, a]) => [
        a.externalId,
        { token: a.accessToken, channel: channel as FakeChannel },
      ]),
    ),
  });
  // A short deadline: the hanging fake must end the call quickly.
  graph = createGraphClient({ url: fake.url, instagramUrl: fake.url, version: 'v26.0', timeoutMs: 300 });
});
afterAll(() => fake?.close());
beforeEach(() => fake.reset());

function send(channel: FakeChannel, client = graph, account = ACCOUNTS[channel]): Promise<GraphResult> {
  const text = { type: 'text' as const, text: 'hello' };
  if (channel === 'whatsapp') return client.sendWhatsApp(account, '16505551234', text);
  if (channel === 'messenger') return client.sendMessenger(account, '24032189326430958', text);
  return client.sendInstagram(account, '1254459154682919', text);
}

function failure(result: GraphResult) {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result;
}

const T = true;
const P = false;

describe("Meta's canned failures, per channel", () => {
  // [channel, kind, transient, HTTP status, code, subcode]
  const cases: [FakeChannel, FailKind, boolean, number, number, number | null][] = [
    ['whatsapp', 'server', T, 500, 131000, null],
    ['messenger', 'server', T, 500, 2, null],
    ['instagram', 'server', T, 500, 2, null],
    ['whatsapp', 'unavailable', T, 503, 2, null],
    ['whatsapp', 'throttle', T, 400, 130429, null],
    ['messenger', 'throttle', T, 400, 613, null],
    ['instagram', 'throttle', T, 400, 613, null],
    ['messenger', 'http429', T, 429, 4, null],
    ['whatsapp', 'token', P, 401, 190, 463],
    ['messenger', 'token', P, 400, 190, null],
    ['whatsapp', 'recipient', P, 400, 131026, null],
    ['messenger', 'recipient', P, 400, 551, 1545041],
    ['instagram', 'recipient', P, 400, 551, 1545041],
    ['whatsapp', 'window', P, 400, 131047, null],
    ['messenger', 'window', P, 400, 10, 2018278],
    ['instagram', 'window', P, 400, 10, 2534022],
    ['whatsapp', 'invalid', P, 400, 100, null],
    ['messenger', 'invalid', P, 400, 100, null],
  ];
  it.each(cases)(
    '%s %s is transient=%s (HTTP %i, code %i)',
    async (channel, kind, transient, status, code, subcode) => {
      fake.failNext(1, kind);
      const f = failure(await send(channel));
      expect(f).toMatchObject({ transient, status, error: { code, subcode } });
      expect(f.error.fbtrace_id).toMatch(/^A/);
      expect(f.error.message).not.toBe('');
      // The next call goes through: one failure was asked for.
      expect((await send(channel)).ok).toBe(true);
    },
  );

  it("keeps WhatsApp's error_data.details, which Meta says to read beside the code", async () => {
    fake.failNext(1, 'window');
    const f = failure(await send('whatsapp'));
    expect(f.error.type).toBe('OAuthException');
    expect(f.error.details).toMatch(/more than 24 hours/);
  });
});

describe('other codes Meta documents', () => {
  const wa = (status: number, code: number): Fault => ({
    status,
    body: { error: { message: `(#${code}) x`, type: 'OAuthException', code, fbtrace_id: 'Atrace' } },
  });
  // [what, fault, transient]
  const cases: [string, Fault, boolean][] = [
    ['WhatsApp account rate limit 80007', wa(400, 80007), T],
    ['WhatsApp pair rate limit 131056', wa(400, 131056), T],
    ['WhatsApp service unavailable 131016', wa(503, 131016), T],
    ['WhatsApp maintenance mode 131057', wa(500, 131057), T],
    ['Graph application throttling 4 (as a 400)', wa(400, 4), T],
    ['Graph user throttling 17', wa(400, 17), T],
    ['Page rate limit 32', wa(400, 32), T],
    ['Graph unknown error 1', wa(400, 1), T],
    ['Messenger temporary send failure 1200', wa(400, 1200), T],
    ['WhatsApp recipient not in allowed list 131030', wa(400, 131030), P],
    ['WhatsApp unsupported message type 131051', wa(400, 131051), P],
    ['WhatsApp template does not exist 132001', wa(404, 132001), P],
    ['WhatsApp spam rate limit 131048 (a quality restriction, not a busy moment)', wa(400, 131048), P],
    ['policy block 368', wa(403, 368), P],
    ['permission denied 10 without a subcode', wa(403, 10), P],
    ['an unknown code with a 4xx', wa(400, 987654), P],
    ['an unknown code with a 5xx', wa(502, 987654), T],
  ];
  it.each(cases)('%s: transient=%s', async (_what, fault, transient) => {
    fake.failNext(1, fault);
    const f = failure(await send('whatsapp'));
    expect(f.transient).toBe(transient);
    expect(f.status).toBe(fault.status);
    expect(f.error.code).toBe((fault.body as { error: { code: number } }).error.code);
  });

  it("believes Graph's is_transient hint on a code it does not list", async () => {
    fake.failNext(1, {
      status: 400,
      body: {
        error: {
          message: 'later',
          type: 'OAuthException',
          code: 555555,
          is_transient: true,
          fbtrace_id: 'A',
        },
      },
    });
    expect(failure(await send('messenger')).transient).toBe(true);
  });
});

describe('answers that are not Graph error bodies', () => {
  it("takes a proxy's 502 page as transient, with the status and an excerpt", async () => {
    fake.failNext(1, { status: 502, body: '<html><body>502 Bad Gateway</body></html>' });
    const f = failure(await send('whatsapp'));
    expect(f).toMatchObject({ transient: true, status: 502, error: { code: null, type: 'http_error' } });
    expect(f.error.message).toContain('502 Bad Gateway');
  });

  it("takes a proxy's 403 page as permanent", async () => {
    fake.failNext(1, { status: 403, body: 'Forbidden' });
    expect(failure(await send('messenger'))).toMatchObject({ transient: false, status: 403 });
  });

  it('takes a success without a message id as permanent, since retrying might send twice', async () => {
    fake.failNext(1, { status: 200, body: { messaging_product: 'whatsapp', messages: [] } });
    expect(failure(await send('whatsapp'))).toMatchObject({
      transient: false,
      status: 200,
      error: { type: 'invalid_response' },
    });
  });
});

describe('no answer at all', () => {
  it('gives up on a Graph API that never answers at the deadline, as a transient timeout', async () => {
    fake.failNext(1, 'hang');
    const started = Date.now();
    const f = failure(await send('whatsapp'));
    expect(f).toMatchObject({ transient: true, status: null, error: { type: 'timeout', code: null } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(fake.requests).toHaveLength(1);
  });

  it('also times out when the answer is slower than the deadline', async () => {
    fake.setLatency(1000);
    expect(failure(await send('instagram')).error.type).toBe('timeout');
  });

  it('takes a dropped connection as a transient network error', async () => {
    fake.failNext(1, 'drop');
    expect(failure(await send('messenger'))).toMatchObject({
      transient: true,
      status: null,
      error: { type: 'network_error' },
    });
  });

  it('takes nobody listening as a transient network error', async () => {
    const gone = await startFakeGraph();
    const url = gone.url;
    await gone.close();
    const client = createGraphClient({ url, instagramUrl: url, version: 'v26.0', timeoutMs: 2000 });
    const f = failure(await send('whatsapp', client));
    expect(f).toMatchObject({ transient: true, status: null, error: { type: 'network_error' } });
    expect(f.error.message).toMatch(/ECONNREFUSED/);
  });
});

describe('the access token in failures', () => {
  it('is refused as Graph refuses a wrong token (190, permanent) and is nowhere in the result', async () => {
    for (const channel of ['whatsapp', 'messenger', 'instagram'] as const) {
      const wrong = { ...ACCOUNTS[channel], accessToken: 'EAAwrong-secret-token' };
      const f = failure(await send(channel, graph, wrong));
      expect(f).toMatchObject({ transient: false, error: { code: 190 } });
      expect(JSON.stringify(f)).not.toContain('EAAwrong-secret-token');
    }
  });

  it("is redacted from an error page that echoes it (a proxy's, say)", async () => {
    const token = ACCOUNTS.whatsapp.accessToken;
    fake.failNext(1, { status: 500, body: `upstream refused Authorization: Bearer ${token}` });
    const f = failure(await send('whatsapp'));
    expect(JSON.stringify(f)).not.toContain(token);
    expect(f.error.message).toContain('[redacted]');
  });

  it('is redacted from a Graph error message and details that contain it', async () => {
    const token = ACCOUNTS.whatsapp.accessToken;
    fake.failNext(1, {
      status: 400,
      body: {
        error: {
          message: `bad token ${token}`,
          type: 'OAuthException',
          code: 190,
          error_data: { messaging_product: 'whatsapp', details: `token ${token} expired` },
          fbtrace_id: 'A',
        },
      },
    });
    expect(JSON.stringify(failure(await send('whatsapp')))).not.toContain(token);
  });

  it('is nowhere in a timeout or a network error either', async () => {
    fake.failNext(1, 'hang');
    fake.failNext(1, 'drop');
    for (const f of [failure(await send('whatsapp')), failure(await send('whatsapp'))]) {
      expect(JSON.stringify(f)).not.toContain(ACCOUNTS.whatsapp.accessToken);
    }
  });
});

describe('an unknown sender id', () => {
  it("is Graph's permanent 100/33 (the object does not exist or the token cannot reach it)", async () => {
    const f = failure(await send('messenger', graph, { externalId: '999', accessToken: 'x' }));
    expect(f).toMatchObject({
      transient: false,
      status: 400,
      error: { code: 100, subcode: 33, type: 'GraphMethodException' },
    });
  });
});
