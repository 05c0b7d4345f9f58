// Realtime's notices follow the channels (docs/decisions.md, "LISTEN only with a channel" and
// "Notices only where someone listens"): an API process LISTENs only while it has a channel, so
// one serving no subscriber neither holds the connection nor wakes for each write; and a write
// notifies only in an organization some process has a channel in, since PostgreSQL serializes
// every notifying commit of the cluster. A channel joined hears from its confirmation on; after
// the last one leaves (and the linger, 0 here) the LISTEN goes, and a later join brings it back.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/db.ts';
import { orgOf, type Session, signUp } from '../helpers/http.ts';
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

/** A plain connection to the service's database (PostgreSQL). */
async function connect() {
  const c = new pg.Client({ connectionString: svc.databaseUrl });
  await c.connect();
  return c;
}

/** Connections to the service's database whose last statement was its realtime LISTEN. */
async function listeners(): Promise<number> {
  const c = await connect();
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

  it.runIf(onPostgres())('a write notifies only in an organization someone has a channel in', async () => {
    const quiet = await signUp(svc, 'Nobody Subscribed');
    const heard = await signUp(svc, 'Someone Subscribed');
    const c = await connect();
    const notices: { org: string }[] = [];
    c.on('notification', (n) => notices.push(JSON.parse(n.payload ?? '{}')));
    await c.query('listen svc_realtime');
    // A process that died with a channel in `quiet` left a row that has expired.
    await c.query(
      `insert into app.realtime_interest (organization_id, process, until)
       values ($1, gen_random_uuid(), now() - interval '1 second')`,
      [orgOf(quiet)],
    );
    try {
      const listener = clientFor(svc, heard.access_token);
      const sub = await subscribe(listener, { table: 'contacts', event: 'INSERT' });
      await insert(clientFor(svc, quiet.access_token), 'Unheard');
      await insert(listener, 'Heard');
      expect((await sub.next()).new).toMatchObject({ first_name: 'Heard' });
      // Notices arrive in commit order: had the first write notified, its notice would be first.
      const first = await eventually(() => notices[0]);
      expect(first).toMatchObject({ kind: 'change', org: orgOf(heard) });
      expect(notices.some((n) => n.org === orgOf(quiet))).toBe(false);
      await listener.removeAllChannels();
    } finally {
      await c.end();
    }
  });
});

describe.runIf(onPostgres())('a stopped process', () => {
  it('takes its organizations out of the notices', async () => {
    const other = await startTestService({}, { databaseUrl: svc.databaseUrl, dataDir: svc.dataDir });
    const session = await signUp(other, 'Leaving Shop');
    const client = clientFor(other, session.access_token);
    await subscribe(client, { table: 'contacts', event: 'INSERT' });
    const c = await connect();
    const live = async () =>
      (
        await c.query('select count(*)::int as n from app.realtime_interest where organization_id = $1', [
          orgOf(session),
        ])
      ).rows[0].n;
    try {
      expect(await live()).toBe(1);
      await client.removeAllChannels();
      await other.stop();
      expect(await live()).toBe(0);
    } finally {
      await c.end();
    }
  });
});
