// An API process LISTENs for realtime's notices only while it has a channel (docs/decisions.md,
// "LISTEN only with a channel"): every write of an offered table notifies every listening process,
// so one serving no subscriber must not hold the connection or wake for each write. A channel
// joined hears from its confirmation on; after the last one leaves (and the linger, 0 here) the
// LISTEN goes, and a later join brings it back.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/db.ts';
import { type Session, signUp } from '../helpers/http.ts';
import { eventually } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { clientFor, subscribe } from './subscriber.ts';

let svc: TestService;
let owner: Session;

beforeAll(async () => {
  svc = await startTestService({ REALTIME_LISTEN_LINGER_SECONDS: '0' });
  owner = await signUp(svc, 'Listening Shop');
});
afterAll(async () => {
  await svc?.stop();
});

/** Connections to the service's database whose last statement was its realtime LISTEN. */
async function listeners(): Promise<number> {
  const c = new pg.Client({ connectionString: svc.databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and query = 'listen svc_realtime'`,
    );
    return rows[0].n;
  } finally {
    await c.end();
  }
}

const insert = async (client: ReturnType<typeof clientFor>, name: string) => {
  const { error } = await client.from('contacts').insert({ first_name: name });
  if (error) throw error;
};

describe('the realtime LISTEN follows the channels', () => {
  it.runIf(onPostgres())(
    'a process with no channel holds no LISTEN; a join opens it, the last leave closes it',
    async () => {
      expect(await listeners()).toBe(0);
      const client = clientFor(svc, owner.access_token);
      const sub = await subscribe(client, { table: 'contacts', event: 'INSERT' });
      expect(await listeners()).toBe(1);
      await insert(client, 'Heard');
      expect((await sub.next()).new).toMatchObject({ first_name: 'Heard' });
      await client.removeAllChannels();
      await eventually(async () => (await listeners()) === 0 || undefined);
    },
  );

  it('a channel joined after the last one left hears what is written next', async () => {
    const client = clientFor(svc, owner.access_token);
    const first = await subscribe(client, { table: 'contacts', event: 'INSERT' });
    await insert(client, 'Before');
    expect((await first.next()).new).toMatchObject({ first_name: 'Before' });
    await client.removeChannel(first.channel);
    // The linger is 0: the LISTEN is going or gone when the next join comes.
    const again = await subscribe(client, { table: 'contacts', event: 'INSERT' });
    await insert(client, 'After');
    expect((await again.next()).new).toMatchObject({ first_name: 'After' });
    await client.removeAllChannels();
  });
});
