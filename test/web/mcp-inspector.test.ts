// The MCP Inspector's CLI connects to `{base_url}/mcp` given nothing but the URL (issue 31,
// section 3): it recognises the path as Streamable HTTP, meets the 401, signs in with OAuth (the
// consent page driven here in Chromium, its callback its own loopback listener) and lists the
// tools. Not run by default: the Inspector is an npm package the project does not depend on.
//   npm install --prefix /tmp/inspector @modelcontextprotocol/inspector     (Node 22)
//   MCP_INSPECTOR=/tmp/inspector/node_modules/.bin/mcp-inspector npx vitest run test/web/mcp-inspector.test.ts
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPage, shows, signUpInDashboard, startDashboard } from '../helpers/browser.ts';
import type { TestService } from '../helpers/service.ts';

const INSPECTOR = process.env.MCP_INSPECTOR;

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  if (INSPECTOR) ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

describe.skipIf(!INSPECTOR)('the MCP Inspector', () => {
  test('signs in with the URL alone and lists the tools', async () => {
    const { context, page } = await openPage(browser);
    await signUpInDashboard(svc, page, 'Inspected Shop');
    const home = mkdtempSync(path.join(tmpdir(), 'inspector-'));
    const child = spawn(INSPECTOR as string, ['--cli', `${svc.url}/mcp`, '--method', 'tools/list'], {
      env: {
        ...process.env,
        HOME: home,
        VITEST: '',
        NO_COLOR: '1', // the URL printed plain, not as a terminal hyperlink
        MCP_AUTO_OPEN_ENABLED: 'true',
        // Its "browser" is this test: the URL is read from what the Inspector prints.
        BROWSER: 'true',
        MCP_OAUTH_CALLBACK_URL: 'http://127.0.0.1:46276/oauth/callback',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    const authorizationUrl = new Promise<string>((resolve) =>
      child.stderr.on('data', (d) => {
        stderr += d;
        const m = /navigate to: (\S+)/.exec(stderr);
        if (m?.[1]) resolve(m[1]);
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await page.goto(await authorizationUrl);
      await shows(page.getByRole('button', { name: 'Allow' }));
      await page.getByRole('button', { name: 'Allow' }).click();
      expect(await exited, `${stdout}\n${stderr}`).toBe(0);
      expect(stdout).toContain('svc_list_contacts');
    } finally {
      child.kill();
      rmSync(home, { recursive: true, force: true });
      await context.close();
    }
  }, 120_000);
});
