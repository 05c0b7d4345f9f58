import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, newRouter } from '../platform/http/openapi.ts';
import { BATCH, EXPORT_MAX_ROWS, EXPORT_SORTS, exportCsv } from '../rest/export.ts';
import type { Services } from '../services.ts';

const route = createRoute({
  method: 'get',
  path: '/export/{table}',
  summary: 'Every row matching /rest/v1 filters, as one CSV file (the dashboard’s “Export CSV”)',
  description: [
    `Takes the query string \`GET /rest/v1/{table}\` takes — filters, \`or\`/\`and\`, \`select\` with embeds, \`order\` — and answers every matching row, not one page: the REST page cap (100) does not apply, and the whole file is one call against the day's quota. Tables: ${Object.keys(EXPORT_SORTS).join(', ')}.`,
    `\`order\` is one column of ${Object.entries(EXPORT_SORTS)
      .map(([t, cols]) => `${t} (${cols.join(', ')})`)
      .join(
        ', ',
      )}, \`.asc\` or \`.desc\` (nulls last ascending, first descending, as PostgreSQL orders them); the default is \`created_at.desc\`. \`limit\` and \`offset\` are refused.`,
    `Read in batches of ${BATCH} rows on (column, id) under the caller's own row-level security, streamed as it is read. At most ${EXPORT_MAX_ROWS.toLocaleString('en')} rows: more is 413 \`export_too_large\` before anything is sent.`,
    `The file: UTF-8 with a byte order mark, the header row, then each row as \`Accept: text/csv\` writes it (PostgreSQL's record text: a value with a comma, quote or space in double quotes, NULL empty, an embed as its JSON). A text cell that begins with = + - @, a tab or a carriage return has an apostrophe put before it, so a spreadsheet shows it and runs no formula (OWASP, CSV injection).`,
  ].join('\n\n'),
  request: {
    params: z.object({ table: z.string().openapi({ example: 'contacts' }) }),
  },
  responses: {
    200: {
      description:
        'The CSV file, as an attachment named `<table>-<YYYY-MM-DD>.csv`; `X-Total-Count` says how many rows it holds',
      content: { 'text/csv': { schema: z.string() } },
    },
    ...errorResponses(400, 401, 404, 413, 429),
  },
});

const encoder = new TextEncoder();

export function exportFunction(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const url = c.req.url;
    const q = url.indexOf('?');
    const file = await exportCsv(
      s,
      c.get('principal'),
      c.req.valid('param').table,
      q < 0 ? '' : url.slice(q + 1),
      s.now(),
    );
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await file.chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
      async cancel() {
        await file.chunks.return(undefined);
      },
    });
    // A raw Response: the file is streamed as it is read, which c.body() would type as JSON's.
    return new Response(body, {
      status: 200,
      headers: {
        'content-type': 'text/csv; charset=utf-8; header=present',
        'content-disposition': `attachment; filename="${file.filename}"`,
        'x-total-count': String(file.rows),
        'cache-control': 'no-store',
      },
    }) as never;
  });
}
