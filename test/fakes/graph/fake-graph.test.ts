// The fake Graph API itself, spoken to with plain fetch as Meta's own examples do: it must refuse
// what Meta refuses (so a client bug shows up here, not in production), accept Meta's documented
// request shapes (JSON with a bearer token, or form fields with access_token as in Meta's curl
// examples), and its test controls must do what they say.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeGraph, startFakeGraph } from './index.ts';

const WA_ID = '106540352242922';
const PAGE_ID = '105954558954427';
const IG_ID = '17841405822304914';

let fake: FakeGraph;
beforeAll(async () => {
  fake = await startFakeGraph({
    accounts: {
      [WA_ID]: { token: 'wa-token', channel: 'whatsapp' },
      [PAGE_ID]: { token: 'page-token', channel: 'messenger' },
      [IG_ID]: { token: 'ig-token', channel: 'instagram' },
    },
  });
});
afterAll(() => fake?.close());
beforeEach(() => fake.reset());

/** A Graph answer as the tests read it: `error` is there when they look at it. */
type Answer = Record<string, unknown> & {
  error: { code: number; error_subcode?: number; type: string; error_data: { details: string } };
};

async function post(path: string, body: unknown, token = 'wa-token') {
  const res = await fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer };
}

const waText = { messaging_product: 'whatsapp', to: '16505551234', type: 'text', text: { body: 'hi' } };

describe('WhatsApp Cloud API endpoint', () => {
  it("answers a text exactly as Meta does: messaging_product, contacts [{input, wa_id}], messages [{id: 'wamid.…'}]", async () => {
    const res = await post(`/v26.0/${WA_ID}/messages`, { ...waText, to: '+16505551234' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      messaging_product: 'whatsapp',
      contacts: [{ input: '+16505551234', wa_id: '16505551234' }],
      messages: [{ id: expect.stringMatching(/^wamid\./) }],
    });
  });

  it('refuses what Meta refuses with code 100 and the field named in error_data.details', async () => {
    const bad: [string, unknown][] = [
      ['messaging_product', { ...waText, messaging_product: undefined }],
      ['to', { ...waText, to: 'not-a-number' }],
      ['text.body', { ...waText, text: {} }],
      ['template.name', { ...waText, type: 'template', template: { language: { code: 'en_US' } } }],
      ['template.language.code', { ...waText, type: 'template', template: { name: 'x', language: 'en_US' } }],
      ['image.link', { ...waText, type: 'image', image: { link: 'ftp://x/y.png' } }],
      [
        'audio does not take a caption',
        { ...waText, type: 'audio', audio: { link: 'https://x/a.ogg', caption: 'c' } },
      ],
      ['not supported', { ...waText, type: 'carrier-pigeon' }],
    ];
    for (const [field, body] of bad) {
      const res = await post(`/v26.0/${WA_ID}/messages`, body);
      expect(res.status, field).toBe(400);
      expect(res.body.error).toMatchObject({ code: 100, type: 'OAuthException' });
      expect(res.body.error.error_data.details, field).toContain(field);
    }
    expect(fake.sent()).toHaveLength(0);
  });

  it('refuses a missing or wrong token with 401, code 190 and a WWW-Authenticate header', async () => {
    const res = await post(`/v26.0/${WA_ID}/messages`, waText, 'page-token');
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 190, type: 'OAuthException' });
    expect(res.headers.get('www-authenticate')).toMatch(/invalid_token/);
    const none = await fetch(`${fake.url}/v26.0/${WA_ID}/messages`, {
      method: 'POST',
      body: JSON.stringify(waText),
    });
    expect(none.status).toBe(401);
  });
});

describe('Messenger and Instagram endpoints', () => {
  it('answers {recipient_id, message_id} with m_ ids for Messenger', async () => {
    const res = await post(
      `/v26.0/${PAGE_ID}/messages`,
      { recipient: { id: '42' }, messaging_type: 'RESPONSE', message: { text: 'hi' } },
      'page-token',
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ recipient_id: '42', message_id: expect.stringMatching(/^m_/) });
  });

  it('requires messaging_type on Messenger but not on Instagram', async () => {
    const body = { recipient: { id: '42' }, message: { text: 'hi' } };
    expect((await post(`/v26.0/${PAGE_ID}/messages`, body, 'page-token')).status).toBe(400);
    const ig = await post(`/v26.0/${IG_ID}/messages`, body, 'ig-token');
    expect(ig.status).toBe(200);
    expect(ig.body).toEqual({ recipient_id: '42', message_id: expect.any(String) });
  });

  it('refuses a tag without MESSAGE_TAG, MESSAGE_TAG without a known tag, text with an attachment', async () => {
    const bad = [
      { recipient: { id: '1' }, messaging_type: 'RESPONSE', tag: 'HUMAN_AGENT', message: { text: 'x' } },
      { recipient: { id: '1' }, messaging_type: 'MESSAGE_TAG', tag: 'WHENEVER', message: { text: 'x' } },
      { recipient: { id: '1' }, messaging_type: 'MESSAGE_TAG', message: { text: 'x' } },
      {
        recipient: { id: '1' },
        messaging_type: 'RESPONSE',
        message: { text: 'x', attachment: { type: 'image', payload: { url: 'https://x/a.png' } } },
      },
      { recipient: {}, messaging_type: 'RESPONSE', message: { text: 'x' } },
      { recipient: { id: '1' }, messaging_type: 'PROMOTION', message: { text: 'x' } },
    ];
    for (const body of bad) {
      const res = await post(`/v26.0/${PAGE_ID}/messages`, body, 'page-token');
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe(100);
    }
  });

  it('refuses a file attachment and a text over 1000 bytes on Instagram', async () => {
    const file = {
      recipient: { id: '1' },
      message: { attachment: { type: 'file', payload: { url: 'https://x/a.pdf' } } },
    };
    expect((await post(`/v26.0/${IG_ID}/messages`, file, 'ig-token')).status).toBe(400);
    const long = { recipient: { id: '1' }, message: { text: 'é'.repeat(501) } };
    expect((await post(`/v26.0/${IG_ID}/messages`, long, 'ig-token')).status).toBe(400);
  });

  it("takes Meta's curl shape: form fields holding JSON and access_token as a parameter", async () => {
    const form = new URLSearchParams({
      recipient: JSON.stringify({ id: '42' }),
      messaging_type: 'RESPONSE',
      message: JSON.stringify({ text: 'hello, world' }),
    });
    const res = await fetch(`${fake.url}/v26.0/${PAGE_ID}/messages?access_token=page-token`, {
      method: 'POST',
      body: form,
    });
    expect(res.status).toBe(200);
    expect(fake.requests[0]?.body).toEqual({
      recipient: { id: '42' },
      messaging_type: 'RESPONSE',
      message: { text: 'hello, world' },
    });
  });
});

describe('routing', () => {
  it("answers an unknown sender id with Graph's 100/33 and an unknown path with 2500", async () => {
    const unknown = await post('/v26.0/123/messages', waText);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 100, error_subcode: 33, type: 'GraphMethodException' });
    // /{id}/feed is an edge now (Page publishing): an unknown path is one no edge has.
    const path = await post('/v26.0/123/feed/extra', {});
    expect(path.body.error.code).toBe(2500);
  });

  it('serves unversioned paths as Graph does (the app default version)', async () => {
    expect((await post(`/${WA_ID}/messages`, waText)).status).toBe(200);
    expect(fake.requests[0]?.version).toBeNull();
  });
});

describe('test controls', () => {
  it('records method, path, headers and parsed body of every request, refused ones included', async () => {
    await post(`/v26.0/${WA_ID}/messages`, waText, 'nope');
    await post(`/v26.0/${WA_ID}/messages`, waText);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]).toMatchObject({
      method: 'POST',
      path: `/v26.0/${WA_ID}/messages`,
      version: 'v26.0',
      senderId: WA_ID,
      channel: 'whatsapp',
      body: waText,
      headers: { authorization: 'Bearer wa-token', 'content-type': 'application/json' },
      response: { status: 200 },
    });
    expect(fake.sent()).toEqual([fake.requests[1]]);
  });

  it('fails exactly the next n well-formed sends, in order, then sends again', async () => {
    fake.failNext(2, 'server');
    fake.failNext(1, 'throttle');
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(`/v26.0/${WA_ID}/messages`, waText)).status);
    expect(statuses).toEqual([500, 500, 400, 200]);
  });

  it('does not spend a planned failure on a request it refuses anyway', async () => {
    fake.failNext(1, 'server');
    expect((await post(`/v26.0/${WA_ID}/messages`, { ...waText, to: 'x' })).body.error.code).toBe(100);
    expect((await post(`/v26.0/${WA_ID}/messages`, waText)).status).toBe(500);
  });

  it('waits the configured latency before answering', async () => {
    fake.setLatency(150);
    const started = Date.now();
    await post(`/v26.0/${WA_ID}/messages`, waText);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('reset forgets requests, planned failures and latency', async () => {
    await post(`/v26.0/${WA_ID}/messages`, waText);
    fake.failNext(3, 'server');
    fake.setLatency(5000);
    fake.reset();
    expect(fake.requests).toHaveLength(0);
    const started = Date.now();
    expect((await post(`/v26.0/${WA_ID}/messages`, waText)).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('closes while a request hangs', async () => {
    const other = await startFakeGraph();
    other.failNext(1, 'hang');
    const pending = fetch(`${other.url}/v26.0/1/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify(waText),
    }).then(
      () => 'answered',
      () => 'cut off',
    );
    while (other.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    await other.close();
    expect(await pending).toBe('cut off');
  });
});

describe('without configured accounts (development)', () => {
  it('takes any bearer token for any id and reads the channel from the body', async () => {
    const open = await startFakeGraph();
    try {
      const send = (body: unknown) =>
        fetch(`${open.url}/v26.0/777/messages`, {
          method: 'POST',
          headers: { authorization: 'Bearer anything', 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await send(waText)).status).toBe(200);
      expect(
        (await send({ recipient: { id: '1' }, messaging_type: 'RESPONSE', message: { text: 'x' } })).status,
      ).toBe(200);
      expect((await send({ recipient: { id: '1' }, message: { text: 'x' } })).status).toBe(200);
      expect(open.requests.map((r) => r.channel)).toEqual(['whatsapp', 'messenger', 'instagram']);
    } finally {
      await open.close();
    }
  });
});
