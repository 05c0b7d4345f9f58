// Sorting the contacts and orders tables by a header, and exporting what a list shows as CSV
// (issue 30 §3): a click orders the rows (aria-sort says how), Next goes on in that order, the
// order is in the URL (a reload keeps it), at phone width too; "Export CSV" downloads every
// matching row in the list's order, past the page, from one request.
import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  eventually,
  expectCleanPage,
  goTo,
  openPage,
  PHONE,
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

async function growthOrganization(name: string) {
  const [org] = await svc.services.db.query<{ id: string }>(
    "update public.organizations set plan = 'growth' where name = $1 returning id",
    [name],
  );
  return org?.id as string;
}

const pager = (page: TestPage) => page.getByRole('navigation', { name: 'Pages' });
const column = (page: TestPage, table: string, n: number) =>
  page.getByRole('table', { name: table }).locator(`tbody tr td:nth-child(${n})`).allTextContents();
const header = (page: TestPage, table: string, name: string) =>
  page.getByRole('table', { name: table }).getByRole('columnheader', { name });

const NAMES = Array.from({ length: 40 }, (_, i) => `Name ${String((i * 17) % 40).padStart(2, '0')}`);

describeBrowser('sorting the big lists by a header, and exporting them', () => {
  test('contacts by name: a click sorts, Next keeps the order, a reload keeps it, a second click reverses', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Sorted names');
    const org = await growthOrganization('Sorted names');
    await svc.services.db.query(
      `insert into public.contacts (organization_id, first_name, email)
       select $1::uuid, n, case when o % 4 = 0 then null else lower(replace(n, ' ', '')) || '@example.com' end
         from unnest($2::text[]) with ordinality as t(n, o)`,
      [org, NAMES],
    );
    const sent: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/rest/v1/contacts')) sent.push(r.url());
    });
    await goTo(page, 'Contacts');
    await shows(pager(page).getByText('Page 1 of 2'));
    const names = () => column(page, 'Contacts', 1);
    expect(await header(page, 'Contacts', 'Added').getAttribute('aria-sort')).toBe('descending');
    expect(await header(page, 'Contacts', 'Name').getAttribute('aria-sort')).toBeNull();

    const sorted = [...NAMES].sort();
    // Newest first, which is not A→Z (one insert: one instant, so the id orders them).
    expect(await names()).not.toEqual(sorted.slice(0, 25));
    await header(page, 'Contacts', 'Name').getByRole('button').click();
    await eventually(names).toEqual(sorted.slice(0, 25));
    expect(await header(page, 'Contacts', 'Name').getAttribute('aria-sort')).toBe('ascending');
    expect(await header(page, 'Contacts', 'Added').getAttribute('aria-sort')).toBeNull();
    expect(new URL(page.url()).searchParams.get('sort')).toBe('first_name.asc');

    await pager(page).getByRole('button', { name: 'Next' }).click();
    await shows(pager(page).getByText('Page 2 of 2'));
    await eventually(names).toEqual(sorted.slice(25));
    // Paged by a cursor on (first_name, id), never an offset.
    expect(sent.filter((u) => new URL(u).searchParams.has('offset'))).toEqual([]);
    expect(sent.some((u) => new URL(u).searchParams.get('first_name')?.startsWith('gte.'))).toBe(true);

    await page.reload();
    await shows(pager(page).getByText('Page 2 of 2'));
    expect(await names()).toEqual(sorted.slice(25));
    expect(await header(page, 'Contacts', 'Name').getAttribute('aria-sort')).toBe('ascending');
    await pager(page).getByRole('button', { name: 'Previous' }).click();
    await eventually(names).toEqual(sorted.slice(0, 25));

    await header(page, 'Contacts', 'Name').getByRole('button').click();
    await eventually(names).toEqual([...sorted].reverse().slice(0, 25));
    expect(await header(page, 'Contacts', 'Name').getAttribute('aria-sort')).toBe('descending');
    expect(new URL(page.url()).searchParams.get('page')).toBeNull();

    // By email: the contacts without one come after those with one (A→Z), across the page break.
    await header(page, 'Contacts', 'Email').getByRole('button').click();
    const emails = () => column(page, 'Contacts', 2);
    const withEmail = NAMES.filter((_, i) => (i + 1) % 4 !== 0)
      .map((n) => `${n.toLowerCase().replace(' ', '')}@example.com`)
      .sort();
    await eventually(emails).toEqual(withEmail.slice(0, 25));
    await pager(page).getByRole('button', { name: 'Next' }).click();
    await eventually(emails).toEqual([...withEmail.slice(25), ...Array(10).fill('—')]);
    // A shared link to that page (no cursors of the pages before it): Previous finds page 1.
    const link = page.url();
    const other = await context.newPage();
    await other.goto(link);
    await shows(pager(other as TestPage).getByText('Page 2 of 2'));
    await pager(other as TestPage)
      .getByRole('button', { name: 'Previous' })
      .click();
    await shows(pager(other as TestPage).getByText('Page 1 of 2'));
    await eventually(() => column(other as TestPage, 'Contacts', 2)).toEqual(withEmail.slice(0, 25));
    await other.close();
    await expectCleanPage(page);
    await context.close();
  });

  test('Export CSV downloads every contact the filter keeps, in the list’s order, in one request', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Exporting shop');
    const org = await growthOrganization('Exporting shop');
    await svc.services.db.query(
      `insert into public.contacts (organization_id, first_name, tags)
       select $1::uuid, 'Buyer ' || lpad(i::text, 3, '0'), array['buyer'] from generate_series(1, 130) i
       union all select $1::uuid, '=cmd|'' /C calc''!A0', array['buyer']
       union all select $1::uuid, 'Not a buyer', array['other']`,
      [org],
    );
    await goTo(page, 'Contacts');
    await page.getByRole('textbox', { name: 'Tag' }).fill('buyer');
    await shows(pager(page).getByText('Page 1 of 6'));
    await header(page, 'Contacts', 'Name').getByRole('button').click();
    await eventually(async () => (await column(page, 'Contacts', 1))[0]).toBe("=cmd|' /C calc'!A0");
    expect(new URL(page.url()).searchParams.get('sort')).toBe('first_name.asc');

    const exports: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/functions/v1/export/')) exports.push(r.url());
    });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^contacts-\d{4}-\d{2}-\d{2}\.csv$/);
    const bytes = await readFile((await download.path()) as string);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = bytes.subarray(3).toString('utf8').split('\n');
    expect(lines[0]).toBe('first_name,last_name,email,phone,company,job_title,tags,notes,source,created_at');
    const firstNames = lines.slice(1).map((l) => l.slice(0, l.indexOf(',')));
    // 131 rows (more than five pages), A→Z as the list shows them, the formula neutralized.
    expect(firstNames).toEqual([
      `"'=cmd|' /C calc'!A0"`,
      ...Array.from({ length: 130 }, (_, i) => `"Buyer ${String(i + 1).padStart(3, '0')}"`),
    ]);
    expect(exports).toHaveLength(1);
    const sent = new URL(exports[0] as string).searchParams;
    expect(sent.get('tags')).toBe('cs.{buyer}');
    expect(sent.get('order')).toBe('first_name.asc,id.asc');
    await expectCleanPage(page);
    await context.close();
  });

  test('orders by number at phone width: the sortable headers stay as buttons, Next and a reload keep the order', async () => {
    const { context, page } = await openPage(browser, PHONE);
    await signUpInDashboard(svc, page, 'Numbered orders');
    const org = await growthOrganization('Numbered orders');
    // One statement: one created_at for all, so newest first is by id, not by number.
    await svc.services.db.query(
      `insert into public.orders (organization_id, order_number) select $1::uuid, 'X' || i from generate_series(1, 30) i`,
      [org],
    );
    await page.goto(`${svc.url}/app/orders`);
    await shows(pager(page).getByText('Page 1 of 2'));
    const numbers = () => column(page, 'Orders', 1);
    const all = Array.from({ length: 30 }, (_, i) => `ORD-${String(30 - i).padStart(6, '0')}`);
    expect(await numbers()).not.toEqual(all.slice(0, 25));
    // The header row is hidden at this width (rows are cards); its sortable headers are not.
    const order = page.getByRole('button', { name: 'Order', exact: true });
    expect(await order.isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Created' }).isVisible()).toBe(true);
    await order.click();
    await eventually(numbers).toEqual(all.slice(0, 25));
    expect(new URL(page.url()).searchParams.get('sort')).toBe('order_number.desc');
    await pager(page).getByRole('button', { name: 'Next' }).click();
    await eventually(numbers).toEqual(all.slice(25));
    await page.reload();
    await shows(pager(page).getByText('Page 2 of 2'));
    expect(await numbers()).toEqual(all.slice(25));
    await page.getByRole('button', { name: 'Order', exact: true }).click();
    await eventually(numbers).toEqual([...all].reverse().slice(0, 25));
    await expectCleanPage(page);
    await context.close();
  });
});
