// `svc dev fake-graph [--port N] [--host H] [--account ID=TOKEN:CHANNEL …]`: the fake Graph API
// (src/dev/fake-graph) on its own, for running the service against it in development. Prints its
// URL, then one line per request received; never a token. A demo person is signed in at its
// dialogs (oauth.ts), so "Connect with Facebook", "Connect WhatsApp" and "Connect Instagram" can be
// clicked through with any app id and secret.
import {
  type FakeChannel,
  type FakeGraphAccount,
  type FakePerson,
  startFakeGraph,
} from '../dev/fake-graph/server.ts';

/** Who the fake's sign-in dialogs grant: two Pages (one with Instagram), a WhatsApp number, an Instagram account. */
const DEMO_PERSON: FakePerson = {
  name: 'Demo Owner',
  pages: [
    {
      id: '100000000000001',
      name: 'Demo Bakery',
      instagram: { id: '17840000000000001', username: 'demo.bakery' },
    },
    { id: '100000000000002', name: 'Demo Café' },
  ],
  wabas: [
    {
      id: '200000000000001',
      phone_numbers: [
        { id: '300000000000001', display_phone_number: '+1 555-0100', verified_name: 'Demo Bakery' },
      ],
    },
  ],
  instagram: { id: '17840000000000002', username: 'demo.studio' },
};

const CHANNELS: FakeChannel[] = ['whatsapp', 'messenger', 'instagram'];

export async function fakeGraphCommand(args: string[]): Promise<number> {
  let port = 0;
  let host = '127.0.0.1';
  const accounts: Record<string, FakeGraphAccount> = {};
  for (let i = 0; i < args.length; i++) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === '--port' && value && /^\d+$/.test(value) && Number(value) <= 65535) port = Number(value);
    else if (flag === '--host' && value) host = value;
    else if (flag === '--account' && value) {
      const m = /^([^=]+)=([^:]+):(whatsapp|messenger|instagram)$/.exec(value);
      if (!m) return usage(`--account takes ID=TOKEN:CHANNEL (CHANNEL one of ${CHANNELS.join(', ')})`);
      accounts[m[1] as string] = { token: m[2] as string, channel: m[3] as FakeChannel };
    } else return usage(`unknown or incomplete option: ${flag}`);
    i++;
  }
  const fake = await startFakeGraph({
    port,
    host,
    persons: [DEMO_PERSON],
    ...(Object.keys(accounts).length ? { accounts } : {}),
    onRequest: (r) => {
      const answer = r.response ? r.response.status : 'no answer';
      // Graph also takes the token as a form field, and Instagram's code exchange posts the app secret
      // and the code: leave them out of what is printed.
      const shown =
        r.body && typeof r.body === 'object'
          ? {
              ...(r.body as Record<string, unknown>),
              access_token: undefined,
              client_secret: undefined,
              code: undefined,
            }
          : r.body;
      process.stdout.write(
        `${r.method} ${r.path} ${r.channel ?? '-'} -> ${answer} ${JSON.stringify(shown)}\n`,
      );
    },
  });
  const stop = async () => {
    await fake.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(
    `fake graph listening on ${fake.url}\n` +
      `point the service at it: META_GRAPH_URL=${fake.url} META_INSTAGRAM_GRAPH_URL=${fake.url}\n` +
      `sign-ins as ${DEMO_PERSON.name}: META_DIALOG_URL=${fake.url} INSTAGRAM_AUTHORIZE_URL=${fake.url} INSTAGRAM_API_URL=${fake.url}\n` +
      '  with any META_APP_ID, META_APP_SECRET, META_WHATSAPP_CONFIG_ID, INSTAGRAM_APP_ID, INSTAGRAM_APP_SECRET\n' +
      (Object.keys(accounts).length ? '' : 'accepting any bearer token for any sender id\n'),
  );
  return -1; // keep running
}

function usage(problem: string): number {
  process.stderr.write(
    `svc dev fake-graph: ${problem}\nusage: svc dev fake-graph [--port N] [--host H] [--account ID=TOKEN:CHANNEL]…\n`,
  );
  return 2;
}
