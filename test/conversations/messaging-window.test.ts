import { describe, expect, it } from 'vitest';
import { deliveryFor, type WindowQuestion } from '../../src/domain/messaging-window.ts';
import { AppError } from '../../src/platform/errors.ts';

const now = new Date('2026-11-24T12:00:00Z');
const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000);
const ask = (q: Partial<WindowQuestion>) =>
  deliveryFor({
    channel: 'whatsapp',
    content: 'text',
    lastInboundAt: hoursAgo(1),
    sender: 'agent',
    now,
    ...q,
  });
const refusal = (q: Partial<WindowQuestion>) => {
  try {
    ask(q);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
};

describe('messaging windows', () => {
  it('WhatsApp: free text within 24 hours of the last inbound message, a template at any time', () => {
    expect(ask({ lastInboundAt: hoursAgo(23.9) })).toEqual({ messagingType: 'RESPONSE' });
    expect(ask({ content: 'media', lastInboundAt: hoursAgo(24) })).toEqual({ messagingType: 'RESPONSE' });
    expect(ask({ content: 'template', lastInboundAt: null })).toEqual({ messagingType: 'TEMPLATE' });
    expect(ask({ content: 'template', lastInboundAt: hoursAgo(500) })).toEqual({ messagingType: 'TEMPLATE' });
  });

  it('WhatsApp: text after 24 hours is refused with when the window closed and that a template is allowed', () => {
    const e = refusal({ lastInboundAt: hoursAgo(25), sender: 'person' });
    expect(e.status).toBe(409);
    expect(e.code).toBe('outside_messaging_window');
    expect(e.details).toEqual({
      channel: 'whatsapp',
      last_inbound_at: hoursAgo(25).toISOString(),
      window_closed_at: hoursAgo(1).toISOString(),
      allowed: ['template'],
    });
    expect(e.message).toContain('template');
  });

  it('WhatsApp: a customer who never wrote gets templates only', () => {
    const e = refusal({ lastInboundAt: null });
    expect(e.details).toMatchObject({ last_inbound_at: null, window_closed_at: null, allowed: ['template'] });
  });

  it('Messenger and Instagram: standard messaging for 24 hours, then HUMAN_AGENT for a person up to 7 days', () => {
    for (const channel of ['messenger', 'instagram'] as const) {
      expect(ask({ channel, lastInboundAt: hoursAgo(23) })).toEqual({ messagingType: 'RESPONSE' });
      expect(ask({ channel, sender: 'person', lastInboundAt: hoursAgo(100) })).toEqual({
        messagingType: 'MESSAGE_TAG',
        tag: 'HUMAN_AGENT',
      });
      const late = refusal({ channel, sender: 'person', lastInboundAt: hoursAgo(24 * 7 + 1) });
      expect(late.details).toMatchObject({ window_closed_at: hoursAgo(1).toISOString(), allowed: [] });
    }
  });

  it('Messenger: an agent may not use the human-agent tag, and is told a person still can', () => {
    const e = refusal({ channel: 'messenger', sender: 'agent', lastInboundAt: hoursAgo(30) });
    expect(e.details).toMatchObject({ window_closed_at: hoursAgo(6).toISOString() });
    expect(e.message).toContain('a person may still reply');
  });
});
