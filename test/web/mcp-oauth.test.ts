// Proof with a real client (issue 31, section 3): the MCP TypeScript SDK's client, given only the
// URL `{base_url}/mcp` and its OAuth provider, discovers the authorization server from the 401,
// registers itself, sends the person to the consent page (driven here in Chromium: sign in, pick
// the organization and scopes, allow), finishes with the code, lists the tools and calls one. Its
// refresh is exercised when its access token is refused, and a revoked grant sends it back to sign in.

import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  describeBrowser,
  expectCleanPage,
  goTo,
  openPage,
  shows,
  signUpInDashboard,
  startDashboard,
} from '../helpers/browser.ts';
import { call } from '../helpers/http.ts';
import type { TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

const REDIRECT = 'http://127.0.0.1:43117/callback';

/** What an MCP client keeps between runs, in memory; `authorizations` are the URLs it opened. */
class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizations: URL[] = [];
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'SDK Test Client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizations.push(url);
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  invalidateCredentials(what: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (what === 'all' || what === 'tokens') this.saved = undefined;
    if (what === 'all' || what === 'client') this.client = undefined;
  }
}

const transportFor = (provider: OAuthClientProvider) =>
  new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { authProvider: provider });

describeBrowser('an MCP client signs in with OAuth', () => {
  test('the SDK client signs in through the consent page, works, refreshes, and is stopped by a revocation', async () => {
    const { context, page } = await openPage(browser);
    const orgName = 'OAuth Shop';
    await signUpInDashboard(svc, page, orgName);

    // Given only the URL, the client meets a 401 and starts the sign-in.
    const provider = new MemoryProvider();
    const first = transportFor(provider);
    await expect(new Client({ name: 'sdk', version: '1' }).connect(first)).rejects.toThrow(/Unauthorized/);
    expect(provider.client?.client_id).toMatch(/^svc_oc_/);
    const authorization = provider.authorizations.at(-1) as URL;
    expect(authorization.searchParams.get('resource')).toBe(`${svc.url}/mcp`);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');

    // The person decides on the consent page; the browser is sent to the client's redirect URI.
    const redirected = new Promise<URL>((resolve) =>
      page.route(`${REDIRECT}**`, async (route) => {
        resolve(new URL(route.request().url()));
        await route.fulfill({
          status: 200,
          contentType: 'text/html',
          body: '<title>Done</title><p>Done</p>',
        });
      }),
    );
    await page.goto(authorization.toString());
    await shows(page.getByText('SDK Test Client'));
    await shows(page.getByText('127.0.0.1:43117'));
    expect(await page.getByLabel('Organization').locator('option:checked').textContent()).toContain(orgName);
    // The free plan gives agents read only: write is offered but cannot be ticked.
    await expect(page.getByRole('checkbox', { name: /^write/ }).isDisabled()).resolves.toBe(true);
    await expect(page.getByRole('checkbox', { name: /^read/ }).isChecked()).resolves.toBe(true);
    await expectCleanPage(page);
    await page.getByRole('button', { name: 'Allow' }).click();
    const back = await redirected;
    const code = back.searchParams.get('code') as string;
    expect(code).toBeTruthy();
    await first.finishAuth(code);

    // Signed in: tools listed (read ones only) and one called.
    const client = new Client({ name: 'sdk', version: '1' });
    await client.connect(transportFor(provider));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('svc_list_contacts');
    expect(tools.map((t) => t.name)).not.toContain('svc_create_contact');
    const listed = await client.callTool({ name: 'svc_list_contacts', arguments: {} });
    expect(listed.isError).not.toBe(true);
    expect(listed.structuredContent).toMatchObject({ contacts: [] });

    // The grant is listed beside the keys as a connected app.
    await page.goto(`${svc.url}/app`);
    await goTo(page, 'Agents and keys');
    await shows(page.getByRole('cell', { name: 'SDK Test Client' }));
    await shows(page.getByText('Connected app'));

    // An access token refused (as an expired one is) makes the client refresh and carry on.
    const before = provider.saved as OAuthTokens;
    provider.saved = { ...before, access_token: 'not-a-token' };
    const again = await client.callTool({ name: 'svc_list_contacts', arguments: {} });
    expect(again.isError).not.toBe(true);
    expect(provider.saved?.refresh_token).not.toBe(before.refresh_token);

    // Revoked (RFC 7009, as the client's "sign out" does): its token is refused, its refresh too,
    // so the client goes back to the sign-in.
    const revoke = await fetch(`${svc.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: provider.saved?.refresh_token as string,
        client_id: provider.client?.client_id as string,
      }),
    });
    expect(revoke.status).toBe(200);
    const signIns = provider.authorizations.length;
    // Its token refused, its refresh refused: the client forgets them and opens the sign-in again.
    await expect(client.callTool({ name: 'svc_list_contacts', arguments: {} })).rejects.toThrow(
      /Unauthorized/,
    );
    expect(provider.authorizations.length).toBe(signIns + 1);
    expect(provider.saved).toBeUndefined();
    const keys = await call(svc, 'GET', '/rest/v1/agent_api_keys?select=is_active', {
      token: svc.serviceRoleKey,
    });
    expect(keys.json).toEqual([{ is_active: false }]);
    await client.close();
    await context.close();
  });
});
