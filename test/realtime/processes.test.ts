// Several API processes on one PostgreSQL (docs/realtime.md): a write through one reaches a
// subscriber of another, through NOTIFY and a read under the subscriber's claims there; so does
// a broadcast. PostgreSQL only: the embedded engine has one process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/db.ts';
import { call, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { clientFor, closeAll, subscribe } from './subscriber.ts';

describe.runIf(onPostgres())('two API processes on one database', () => {
  let first: TestService;
  let second: TestService;
  const clients: ReturnType<typeof clientFor>[] = [];

  beforeAll(async () => {
    first = await startTestService();
    // The same database and signing keys: a token of one is a token of the other.
    second = await startTestService({}, { databaseUrl: first.databaseUrl, dataDir: first.dataDir });
  });
  afterAll(async () => {
    await closeAll(clients);
    await second?.stop();
    await first?.stop();
  });

  it('a row written through one reaches a subscriber of the other; a stranger on either hears nothing', async () => {
    const owner = await signUp(first, 'Two Processes');
    const stranger = await signUp(first, 'Stranger');
    const onSecond = clientFor(second, owner.access_token);
    const strangerOnSecond = clientFor(second, stranger.access_token);
    clients.push(onSecond, strangerOnSecond);
    const sub = await subscribe(onSecond, { table: 'contacts', event: 'INSERT' });
    const other = await subscribe(strangerOnSecond, { table: 'contacts', event: 'INSERT' });
    const written = await call(first, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      body: { first_name: 'Across' },
      headers: { prefer: 'return=representation' },
    });
    expect((await sub.next()).new).toMatchObject({ id: written.json[0].id, first_name: 'Across' });
    const own = await call(first, 'POST', '/rest/v1/contacts', {
      token: stranger.access_token,
      body: { first_name: 'Theirs' },
      headers: { prefer: 'return=representation' },
    });
    expect((await other.next()).new).toMatchObject({ id: own.json[0].id });
  });
});
