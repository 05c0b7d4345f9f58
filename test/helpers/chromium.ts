// Chromium for the browser tests and bench/web.ts (no vitest here: the bench imports it).
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); Playwright's own download cannot reach the internet here. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // The machine has no outside network: Chromium's background services would only fail.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
