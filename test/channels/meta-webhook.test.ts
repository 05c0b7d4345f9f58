// Meta's payloads → routes and events, and the signature check, as pure functions (no server):
// what the receiver and the worker rely on.

import { describe, expect, it } from 'vitest';
import { metaSignature, verifyMetaSignature } from '../../src/channels/meta-signature.ts';
import {
  asMetaDelivery,
  type MetaDelivery,
  metaEvents,
  metaRoutes,
} from '../../src/channels/meta-webhook.ts';

const wa = (phoneId: string, value: object, field = 'messages') => ({
  id: 'WABA',
  changes: [
    { field, value: { messaging_product: 'whatsapp', metadata: { phone_number_id: phoneId }, ...value } },
  ],
});
const delivery = (body: object) => asMetaDelivery(body) as MetaDelivery;

describe('asMetaDelivery', () => {
  it.each([
    [{ object: 'whatsapp_business_account', entry: [] }, true],
    [{ object: 'page', entry: [] }, true],
    [{ object: 'instagram', entry: [] }, true],
    [{ object: 'user', entry: [] }, false],
    [{ object: 'page' }, false],
    [{ object: 'page', entry: {} }, false],
    [[], false],
    [null, false],
  ])('%j is a delivery: %s', (body, ok) => {
    expect(asMetaDelivery(body) !== null).toBe(ok);
  });
});

describe('metaRoutes', () => {
  it('names each WhatsApp number once, in order, across entries and changes', () => {
    const d = delivery({
      object: 'whatsapp_business_account',
      entry: [wa('1', {}), wa('2', {}), wa('1', {}, 'statuses')],
    });
    expect(metaRoutes(d)).toEqual([
      { provider: 'whatsapp', externalId: '1' },
      { provider: 'whatsapp', externalId: '2' },
    ]);
  });
  it('routes Messenger by Page id and Instagram by account id', () => {
    expect(metaRoutes(delivery({ object: 'page', entry: [{ id: 'P', messaging: [] }] }))).toEqual([
      { provider: 'facebook', externalId: 'P' },
    ]);
    expect(metaRoutes(delivery({ object: 'instagram', entry: [{ id: 17841, messaging: [] }] }))).toEqual([
      { provider: 'instagram', externalId: '17841' },
    ]);
  });
});

describe('metaEvents', () => {
  it("keeps only the account's own changes, skips non-message fields, and keeps unknown types as unsupported", () => {
    const d = delivery({
      object: 'whatsapp_business_account',
      entry: [
        wa('1', {
          messages: [{ from: '15551234567', id: 'wamid.A', timestamp: '10', type: 'order', order: {} }],
        }),
        wa('2', {
          messages: [
            { from: '15551234567', id: 'wamid.B', timestamp: '10', type: 'text', text: { body: 'x' } },
          ],
        }),
        wa('1', { event: 'APPROVED' }, 'message_template_status_update'),
      ],
    });
    expect(metaEvents(d, '1')).toEqual([
      {
        kind: 'message',
        channel: 'whatsapp',
        from: { id: '15551234567', name: undefined },
        providerMessageId: 'wamid.A',
        type: 'unsupported',
        body: null,
        content: { type: 'order' },
        receivedAt: new Date(10_000),
      },
    ]);
  });
  it("skips Messenger echoes of the Page's own messages", () => {
    const d = delivery({
      object: 'page',
      entry: [
        {
          id: 'P',
          messaging: [
            { sender: { id: 'P' }, recipient: { id: 'U' }, timestamp: 1, message: { mid: 'm1', text: 'hi' } },
            {
              sender: { id: 'U' },
              recipient: { id: 'P' },
              timestamp: 1,
              message: { mid: 'm2', text: 'hi', is_echo: true },
            },
          ],
        },
      ],
    });
    expect(metaEvents(d, 'P')).toEqual([]);
  });
});

describe('verifyMetaSignature', () => {
  const body = Buffer.from('{"object":"page","entry":[]}');
  it.each([
    [metaSignature(body, 's'), true],
    [metaSignature(body, 's').toUpperCase().replace('SHA256=', 'sha256='), true],
    [metaSignature(body, 't'), false],
    [metaSignature(body, 's').slice(0, -2), false],
    [`sha1=${'0'.repeat(40)}`, false],
    ['', false],
    [undefined, false],
  ])('%s → %s', (header, ok) => {
    expect(verifyMetaSignature(body, header, 's')).toBe(ok);
  });
});
