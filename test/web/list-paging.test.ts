// The big lists page by keyset cursor (web/src/lib/keyset-list.ts): forward and back through rows
// that share one created_at (as a bulk insert writes them), with a filter applied, every row seen
// exactly once; a shared link to a later page goes back too; the total says "about" when it is
// past the exact range of count=estimated.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  eventually,
  expectCleanPage,
  goTo,
  openPage,
  shows,
  signUpInDashboard,
  startDashboard,
  type TestPage,
} from '../helpers/browser.ts';
import type { TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

/** The organization's id, on a plan whose ceilings leave room for the rows seeded below. */
async function growthOrganization(name: string) {
  const [org] = await svc.services.db.query<{ id: string }>(
    "update public.organizations set plan = 'growth' where name = $1 returning id",
    [name],
  );
  return org?.id as string;
}

const pager = (page: TestPage) => page.getByRole('navigation', { name: 'Pages' });
const shown = (page: TestPage, table: string) =>
  page.getByRole('table', { name: table }).locator('tbody tr td:first-child').allTextContents();

/** Clicks `button` and waits until the pager says `label` and the rows are no longer `before`'s. */
async function turn(
  page: TestPage,
  button: 'Next' | 'Previous',
  label: string,
  table: string,
  before: string[],
) {
  await pager(page).getByRole('button', { name: button }).click();
  await shows(pager(page).getByText(label));
  await eventually(() => shown(page, table)).not.toEqual(before);
  return shown(page, table);
}

describeBrowser('keyset paging of the big lists', () => {
  test('contacts with one created_at, filtered: forward, back and from a shared link, each row once', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Bulk importer');
    const org = await growthOrganization('Bulk importer');
    // One statement: every row gets the same now(), so only the id orders them.
    await svc.services.db.query(
      `insert into public.contacts (organization_id, first_name, tags)
       select $1::uuid, 'Bulk ' || lpad(i::text, 2, '0'), array['bulk'] from generate_series(1, 60) i
       union all
       select $1::uuid, 'Other ' || i, array['other'] from generate_series(1, 1110) i`,
      [org],
    );
    const sent: { url: string; prefer: string }[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/rest/v1/contacts'))
        sent.push({ url: r.url(), prefer: r.headers().prefer ?? '' });
    });
    await goTo(page, 'Contacts');
    // 1,170 rows: past count=estimated's exact range, so the total is worded as an estimate.
    // (1,170 exactly today; an estimate may differ a little.)
    await shows(pager(page).getByText(/^Page 1 of about \d+$/));

    await page.getByRole('textbox', { name: 'Tag' }).fill('bulk');
    await shows(pager(page).getByText('Page 1 of 3'));
    await eventually(async () => (await shown(page, 'Contacts')).every((n) => n.startsWith('Bulk'))).toBe(
      true,
    );
    const first = await shown(page, 'Contacts');
    const second = await turn(page, 'Next', 'Page 2 of 3', 'Contacts', first);
    const third = await turn(page, 'Next', 'Page 3 of 3', 'Contacts', second);
    expect([first.length, second.length, third.length]).toEqual([25, 25, 10]);
    const all = [...first, ...second, ...third];
    expect(new Set(all).size).toBe(60);
    expect(all.every((n) => n.startsWith('Bulk'))).toBe(true);
    await expect(pager(page).getByRole('button', { name: 'Next' }).isDisabled()).resolves.toBe(true);

    // No page skips rows with an offset, and only the first page of a filter set counts.
    const later = sent.filter((r) => r.url.includes('created_at=lte'));
    expect(later.length).toBeGreaterThanOrEqual(2);
    expect(later.filter((r) => r.prefer.includes('count='))).toEqual([]);
    expect(sent.filter((r) => new URL(r.url).searchParams.has('offset'))).toEqual([]);

    // Back through the cursors seen: the very same pages.
    expect(await turn(page, 'Previous', 'Page 2 of 3', 'Contacts', third)).toEqual(second);
    expect(await turn(page, 'Previous', 'Page 1 of 3', 'Contacts', second)).toEqual(first);

    // The last page's link opened afresh (no cursors of the pages before it): Previous still
    // finds the same pages, from the rows just newer than the one it shows.
    await turn(page, 'Next', 'Page 2 of 3', 'Contacts', first);
    await turn(page, 'Next', 'Page 3 of 3', 'Contacts', second);
    const link = page.url();
    expect(new URL(link).searchParams.get('after')).toBeTruthy();
    await page.goto(link);
    await shows(pager(page).getByText('Page 3 of 3'));
    expect(await shown(page, 'Contacts')).toEqual(third);
    expect(await turn(page, 'Previous', 'Page 2 of 3', 'Contacts', third)).toEqual(second);
    expect(await turn(page, 'Previous', 'Page 1 of 3', 'Contacts', second)).toEqual(first);

    // A filter change starts the list again at the top.
    await turn(page, 'Next', 'Page 2 of 3', 'Contacts', first);
    await page.getByRole('searchbox', { name: 'Search' }).fill('bulk 0');
    const ones = Array.from({ length: 9 }, (_, i) => `Bulk 0${i + 1}`);
    await eventually(async () => (await shown(page, 'Contacts')).sort()).toEqual(ones);
    expect(new URL(page.url()).searchParams.get('after')).toBeNull();
    await expectCleanPage(page);
    await context.close();
  });

  test('agent sign-in attempts of one instant page forward and back, each once, while newer ones arrive', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Busy agents');
    const org = await growthOrganization('Busy agents');
    await svc.services.db.query(
      `insert into public.agent_auth_attempts (organization_id, key_prefix, outcome, reason)
       select $1, 'sk_test', 'failure', 'attempt ' || lpad(i::text, 2, '0') from generate_series(1, 45) i`,
      [org],
    );
    await page.goto(`${svc.url}/app/agents`);
    await shows(pager(page).getByText('Page 1 of 3'));
    const table = 'Agent sign-in attempts';
    const reasons = () =>
      page.getByRole('table', { name: table }).locator('tbody tr td:nth-child(4)').allTextContents();
    const first = await reasons();
    // Attempts keep coming while someone reads: the next page still starts after the last row
    // seen (an offset would now start five rows earlier, showing five of them again).
    await svc.services.db.query(
      `insert into public.agent_auth_attempts (organization_id, key_prefix, outcome, reason, created_at)
       select $1::uuid, 'sk_test', 'failure', 'late ' || i, now() + interval '1 minute' from generate_series(1, 5) i`,
      [org],
    );
    await pager(page).getByRole('button', { name: 'Next' }).click();
    await eventually(reasons).not.toEqual(first);
    const second = await reasons();
    await pager(page).getByRole('button', { name: 'Next' }).click();
    await eventually(reasons).not.toEqual(second);
    const third = await reasons();
    const all = [...first, ...second, ...third];
    expect([first.length, second.length, third.length]).toEqual([20, 20, 5]);
    expect(new Set(all).size).toBe(45);
    expect(all.every((r) => r.startsWith('attempt'))).toBe(true);
    await pager(page).getByRole('button', { name: 'Previous' }).click();
    await eventually(reasons).toEqual(second);
    await expectCleanPage(page);
    await context.close();
  });
});
