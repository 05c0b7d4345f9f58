// What the Graph client puts on the wire for each channel, over real HTTP against the fake Graph
// API: the path, the headers and the exact body Meta documents (WhatsApp Cloud API, Messenger Send
// API, Instagram API with Instagram Login), and the message id it reads back. A body that differs
// from these is one Meta may refuse or read differently.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGraphClient, type GraphClient } from '../../src/channels/graph-client.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';

const WA = { externalId: '106540352242922', accessToken: 'EAAwhatsapp-token-1' };
const PAGE = { externalId: '105954558954427', accessToken: 'EAApage-token-2' };
const IG = { externalId: '17841405822304914', accessToken: 'IGAAinstagram-token-3' };

let fake: FakeGraph;
let graph: GraphClient;

beforeAll(async () => {
  fake = await startFakeGraph({
    accounts: {
      [WA.externalId]: { token: WA.accessToken, channel: 'whatsapp' },
      [PAGE.externalId]: { token: PAGE.accessToken, channel: 'messenger' },
      [IG.externalId]: { token: IG.accessToken, channel: 'instagram' },
    },
  });
  graph = createGraphClient({ url: fake.url, instagramUrl: fake.url, version: 'v26.0', timeoutMs: 5000 });
});
afterAll(() => fake?.close());
beforeEach(() => fake.reset());

/** The one request the fake received, after checking it was answered 200. */
function only() {
  expect(fake.requests).toHaveLength(1);
  const r = fake.requests[0];
  if (!r) throw new Error('no request');
  expect(r.response?.status).toBe(200);
  return r;
}

describe('WhatsApp Cloud API', () => {
  it('sends a text as POST /v26.0/{phone-number-id}/messages with a bearer token and a JSON body', async () => {
    const result = await graph.sendWhatsApp(WA, '+16505551234', { type: 'text', text: 'Your order shipped' });
    const r = only();
    expect(r.method).toBe('POST');
    expect(r.path).toBe(`/v26.0/${WA.externalId}/messages`);
    expect(r.query).toEqual({});
    expect(r.headers.authorization).toBe(`Bearer ${WA.accessToken}`);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '+16505551234',
      type: 'text',
      text: { preview_url: false, body: 'Your order shipped' },
    });
    const answer = r.response?.body as { messages: { id: string }[] };
    expect(result).toEqual({
      ok: true,
      providerMessageId: answer.messages[0]?.id,
      recipientId: '16505551234',
    });
    expect(result.ok && result.providerMessageId).toMatch(/^wamid\./);
  });

  it('sends a template by name with the language as {code} and its components unchanged', async () => {
    const components = [{ type: 'body', parameters: [{ type: 'text', text: 'A-1042' }] }];
    const result = await graph.sendWhatsApp(WA, '16505551234', {
      type: 'template',
      template: { name: 'order_update', language: 'en_US', components },
    });
    const r = only();
    expect(r.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '16505551234',
      type: 'template',
      template: { name: 'order_update', language: { code: 'en_US' }, components },
    });
    // Meta adds message_status to a template's answer; the id is still messages[0].id.
    expect((r.response?.body as { messages: unknown[] } | undefined)?.messages[0]).toMatchObject({
      message_status: 'accepted',
    });
    expect(result.ok).toBe(true);
  });

  it('leaves components out of a template that has none', async () => {
    await graph.sendWhatsApp(WA, '16505551234', {
      type: 'template',
      template: { name: 'hello_world', language: { code: 'en_US' } },
    });
    expect(only().body).toMatchObject({ template: { name: 'hello_world', language: { code: 'en_US' } } });
    expect((only().body as { template: object }).template).not.toHaveProperty('components');
  });

  it('sends media by link: a caption on an image, a filename on a document, neither on audio', async () => {
    await graph.sendWhatsApp(WA, '16505551234', {
      type: 'image',
      url: 'https://cdn.example.com/a.jpg',
      caption: 'Front',
    });
    await graph.sendWhatsApp(WA, '16505551234', {
      type: 'document',
      url: 'https://cdn.example.com/invoice.pdf',
      caption: 'Invoice',
      filename: 'invoice-1042.pdf',
    });
    await graph.sendWhatsApp(WA, '16505551234', {
      type: 'audio',
      url: 'https://cdn.example.com/v.ogg',
      caption: 'x',
    });
    await graph.sendWhatsApp(WA, '16505551234', { type: 'video', url: 'https://cdn.example.com/v.mp4' });
    expect(fake.requests.map((r) => r.response?.status)).toEqual([200, 200, 200, 200]);
    const bodies = fake.requests.map((r) => r.body as Record<string, unknown>);
    expect(bodies[0]).toMatchObject({
      type: 'image',
      image: { link: 'https://cdn.example.com/a.jpg', caption: 'Front' },
    });
    expect(bodies[1]).toMatchObject({
      type: 'document',
      document: {
        link: 'https://cdn.example.com/invoice.pdf',
        caption: 'Invoice',
        filename: 'invoice-1042.pdf',
      },
    });
    expect(bodies[2]?.audio).toEqual({ link: 'https://cdn.example.com/v.ogg' });
    expect(bodies[3]?.video).toEqual({ link: 'https://cdn.example.com/v.mp4' });
  });
});

describe('Messenger Send API', () => {
  it('answers within the window as messaging_type RESPONSE to POST /v26.0/{page-id}/messages', async () => {
    const result = await graph.sendMessenger(PAGE, '24032189326430958', { type: 'text', text: 'Hi there' });
    const r = only();
    expect(r.path).toBe(`/v26.0/${PAGE.externalId}/messages`);
    expect(r.headers.authorization).toBe(`Bearer ${PAGE.accessToken}`);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body).toEqual({
      recipient: { id: '24032189326430958' },
      messaging_type: 'RESPONSE',
      message: { text: 'Hi there' },
    });
    const answer = r.response?.body as { message_id: string };
    expect(result).toEqual({
      ok: true,
      providerMessageId: answer.message_id,
      recipientId: '24032189326430958',
    });
    expect(answer.message_id).toMatch(/^m_/);
  });

  it("tags a person's reply after the window as MESSAGE_TAG with tag HUMAN_AGENT", async () => {
    await graph.sendMessenger(
      PAGE,
      '24032189326430958',
      { type: 'text', text: 'Sorry for the wait' },
      { humanAgent: true },
    );
    expect(only().body).toEqual({
      recipient: { id: '24032189326430958' },
      messaging_type: 'MESSAGE_TAG',
      tag: 'HUMAN_AGENT',
      message: { text: 'Sorry for the wait' },
    });
  });

  it('sends media as an attachment with a payload url, a document as type file', async () => {
    await graph.sendMessenger(PAGE, '24032189326430958', {
      type: 'image',
      url: 'https://cdn.example.com/a.jpg',
    });
    await graph.sendMessenger(PAGE, '24032189326430958', {
      type: 'document',
      url: 'https://cdn.example.com/i.pdf',
    });
    expect(fake.requests.map((r) => r.response?.status)).toEqual([200, 200]);
    expect(fake.requests.map((r) => (r.body as { message: unknown }).message)).toEqual([
      { attachment: { type: 'image', payload: { url: 'https://cdn.example.com/a.jpg' } } },
      { attachment: { type: 'file', payload: { url: 'https://cdn.example.com/i.pdf' } } },
    ]);
  });
});

describe('Instagram messaging (Instagram API with Instagram Login)', () => {
  it('sends recipient and message alone to POST /v26.0/{ig-user-id}/messages on the Instagram host', async () => {
    const result = await graph.sendInstagram(IG, '1254459154682919', {
      type: 'text',
      text: 'Thanks for writing',
    });
    const r = only();
    expect(r.path).toBe(`/v26.0/${IG.externalId}/messages`);
    expect(r.headers.authorization).toBe(`Bearer ${IG.accessToken}`);
    expect(r.body).toEqual({
      recipient: { id: '1254459154682919' },
      message: { text: 'Thanks for writing' },
    });
    const answer = r.response?.body as { message_id: string };
    expect(result).toEqual({
      ok: true,
      providerMessageId: answer.message_id,
      recipientId: '1254459154682919',
    });
  });

  it('tags a late human reply HUMAN_AGENT and sends an image as an attachment', async () => {
    await graph.sendInstagram(
      IG,
      '1254459154682919',
      { type: 'text', text: 'Back now' },
      { humanAgent: true },
    );
    await graph.sendInstagram(IG, '1254459154682919', {
      type: 'image',
      url: 'https://cdn.example.com/a.png',
    });
    expect(fake.requests.map((r) => r.response?.status)).toEqual([200, 200]);
    expect(fake.requests[0]?.body).toEqual({
      recipient: { id: '1254459154682919' },
      messaging_type: 'MESSAGE_TAG',
      tag: 'HUMAN_AGENT',
      message: { text: 'Back now' },
    });
    expect(fake.requests[1]?.body).toEqual({
      recipient: { id: '1254459154682919' },
      message: { attachment: { type: 'image', payload: { url: 'https://cdn.example.com/a.png' } } },
    });
  });

  it('calls the Instagram host, not the Facebook one, when they differ', async () => {
    const other = await startFakeGraph();
    try {
      const split = createGraphClient({
        url: fake.url,
        instagramUrl: other.url,
        version: 'v26.0',
        timeoutMs: 5000,
      });
      const result = await split.sendInstagram(IG, '1254459154682919', { type: 'text', text: 'hi' });
      expect(result.ok).toBe(true);
      expect(fake.requests).toHaveLength(0);
      expect(other.requests).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});

describe('the access token', () => {
  it('travels only in the Authorization header, never in the URL or the body', async () => {
    await graph.sendWhatsApp(WA, '16505551234', { type: 'text', text: 'a' });
    await graph.sendMessenger(PAGE, '1', { type: 'text', text: 'b' });
    await graph.sendInstagram(IG, '2', { type: 'text', text: 'c' });
    for (const r of fake.requests) {
      expect(r.query).toEqual({});
      expect(r.rawBody).not.toMatch(/token/i);
    }
  });
});
