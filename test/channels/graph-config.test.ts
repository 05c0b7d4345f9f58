// The Graph API's place in the configuration: Meta's hosts and the current version by default, a
// fake's address when a developer sets one, and a start refused for a version Graph would not
// recognise (a typo there would fail every send, not the start).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('Graph API configuration', () => {
  it("defaults to Meta's hosts, v26.0 and a 10 s deadline", () => {
    expect(loadConfig({}).graph).toEqual({
      url: 'https://graph.facebook.com',
      instagramUrl: 'https://graph.instagram.com',
      version: 'v26.0',
      timeoutMs: 10_000,
    });
  });

  it('takes a fake or a proxy, without a trailing slash, and a deadline in milliseconds', () => {
    const c = loadConfig({
      META_GRAPH_URL: 'http://127.0.0.1:8911/',
      META_INSTAGRAM_GRAPH_URL: 'http://127.0.0.1:8911',
      META_GRAPH_VERSION: 'v25.0',
      META_GRAPH_TIMEOUT_MS: '250',
    });
    expect(c.graph).toEqual({
      url: 'http://127.0.0.1:8911',
      instagramUrl: 'http://127.0.0.1:8911',
      version: 'v25.0',
      timeoutMs: 250,
    });
  });

  it('refuses a version that is not vN.N, an address that is not a URL and a zero deadline', () => {
    expect(() => loadConfig({ META_GRAPH_VERSION: '26.0' })).toThrow(ConfigError);
    expect(() => loadConfig({ META_GRAPH_URL: 'graph.facebook.com' })).toThrow(/META_GRAPH_URL/);
    expect(() => loadConfig({ META_GRAPH_TIMEOUT_MS: '0' })).toThrow(/META_GRAPH_TIMEOUT_MS/);
  });

  it('refuses a first send retry that could start while the request’s own call is still waiting', () => {
    expect(() => loadConfig({ META_GRAPH_TIMEOUT_MS: '60000', SEND_FIRST_RETRY_SECONDS: '60' })).toThrow(
      /SEND_FIRST_RETRY_SECONDS \(60\) must be longer than META_GRAPH_TIMEOUT_MS/,
    );
    expect(loadConfig({ META_GRAPH_TIMEOUT_MS: '59000' }).sendRetry.firstRetrySeconds).toBe(60);
  });
});
