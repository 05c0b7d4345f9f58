import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  goTo,
  openPage,
  shows,
  signUpInDashboard,
  startDashboard,
  type TestPage,
} from '../helpers/browser.ts';
import type { TestService } from '../helpers/service.ts';

// What protects: the dashboard's rows line up as a person sees them (issue 30 §2): inputs side
// by side have the same height and top whether or not one has a hint beneath it, and the usage
// meters of the overview start and end at the same place on every row. Measured with
// getBoundingClientRect at desktop width.

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

type Box = { x: number; y: number; width: number; height: number };
const box = async (page: TestPage, label: string): Promise<Box> => {
  const b = await page.getByLabel(label, { exact: true }).boundingBox();
  if (!b) throw new Error(`${label} is not on the page`);
  return b;
};

describeBrowser('rows that line up', () => {
  test('an input with a hint and one without, side by side, have the same top and height', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Aligned shop');
    await goTo(page, 'Orders');
    await page.getByRole('link', { name: 'New order' }).click();
    const withHint = await box(page, 'Shipping phone');
    const without = await box(page, 'Currency');
    // The same row of the form, so the comparison means something.
    expect(Math.abs(withHint.y - without.y)).toBeLessThan(1);
    expect(Math.abs(withHint.height - without.height)).toBeLessThan(1);
    await context.close();
  });

  test('the usage meters start and end at the same place on every row', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Metered shop');
    await shows(page.getByRole('meter', { name: 'Contacts' }));
    const boxes = await page
      .getByRole('meter')
      .evaluateAll((meters) => meters.map((m) => m.getBoundingClientRect().toJSON() as Box));
    expect(boxes.length).toBeGreaterThan(3);
    const [first] = boxes as [Box];
    for (const b of boxes) {
      expect(Math.abs(b.x - first.x)).toBeLessThan(1);
      expect(Math.abs(b.width - first.width)).toBeLessThan(1);
    }
    await context.close();
  });
});
