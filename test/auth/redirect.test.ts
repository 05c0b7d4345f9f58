// Where a mail's link may send the browser (src/auth/redirect.ts): the site's origin and the allow
// list, compared as parsed URLs. These are the bypasses a string-prefix match let through.
import { describe, expect, it } from 'vitest';
import { allowedRedirect } from '../../src/auth/redirect.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

const SITE = 'https://site.example.test';

describe('allowedRedirect', () => {
  it.each([
    // A user name that spells the allowed host: the browser goes to evil.io.
    ['http://localhost:3000@evil.io/', 'http://localhost:3000*'],
    ['http://localhost:3000@evil.io/', 'http://localhost:3000/*'],
    // A host that merely starts with the allowed one.
    ['https://app.example.com.evil.io/', 'https://app.example.com*'],
    ['https://app.example.com.evil.io/x', 'https://app.example.com/*'],
    // Same host, other port or scheme.
    ['https://app.example.com:444/x', 'https://app.example.com/*'],
    ['http://app.example.com/x', 'https://app.example.com/*'],
    // Outside the entry's path.
    ['https://app.example.com/other', 'https://app.example.com/preview/*'],
    ['https://app.example.com/welcome/more', 'https://app.example.com/welcome'],
  ])('sends %s to the site URL (allow list: %s)', (wanted, entry) => {
    expect(allowedRedirect(wanted, SITE, [entry])).toBe(SITE);
  });

  it('refuses a URL carrying a user name or password, even on the site itself', () => {
    expect(allowedRedirect('https://evil.io@site.example.test/', SITE, [])).toBe(SITE);
    expect(allowedRedirect('https://a:b@app.example.com/x', SITE, ['https://app.example.com/*'])).toBe(SITE);
  });

  it.each([
    ['https://app.example.com/preview/pr-7/reset?x=1', 'https://app.example.com/preview/*'],
    ['https://app.example.com/anything', 'https://app.example.com/*'],
    ['https://app.example.com/welcome?next=1', 'https://app.example.com/welcome'],
    ['https://site.example.test/deep/page', 'https://other.example/'],
  ])('allows %s (allow list: %s)', (wanted, entry) => {
    expect(allowedRedirect(wanted, SITE, [entry])).toBe(new URL(wanted).toString());
  });
});

describe('URI_ALLOW_LIST', () => {
  it.each([
    'http://localhost:3000*',
    'https://app.example.com*',
    'https://*.example.com/',
    'https://a.example/x*',
  ])('refuses at start %s: a * may only end a path, right after a /', (entry) => {
    expect(() => loadConfig({ URI_ALLOW_LIST: entry })).toThrow(ConfigError);
    expect(() => loadConfig({ URI_ALLOW_LIST: entry })).toThrow(/right after a \//);
  });

  it('accepts exact URLs and path prefixes', () => {
    expect(loadConfig({ URI_ALLOW_LIST: 'https://a.example/x, https://b.example/*' }).uriAllowList).toEqual([
      'https://a.example/x',
      'https://b.example/*',
    ]);
  });
});
