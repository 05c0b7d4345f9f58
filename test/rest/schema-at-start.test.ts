// What this file protects: the service answers while its REST schema cache is still being read
// from the catalog (src/rest/schema-cache.ts, a faster start: issue 29). A /rest/v1 request that
// arrives first waits for the cache: it never sees a table as unknown because the cache was
// still empty. (On PGlite the statements before the read queue behind the cache's anyway; on
// PostgreSQL they do not, and without the wait the first answers were from an empty cache.)

import { afterEach, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService | undefined;
afterEach(() => svc?.stop());

it('answers the first /rest/v1 requests after a start from the whole schema', async () => {
  svc = await startTestService();
  // At once, together: nothing else has given the cache time to fill.
  const [described, contacts] = await Promise.all([
    call(svc, 'GET', '/rest/v1'),
    call(svc, 'GET', '/rest/v1/contacts?select=id'),
  ]);
  expect(described.status).toBe(200);
  expect(Object.keys(described.json.definitions)).toEqual(expect.arrayContaining(['contacts', 'orders']));
  // The anon key reads no tenant's rows, but the table is known: not a 404.
  expect(contacts.status).not.toBe(404);
});
