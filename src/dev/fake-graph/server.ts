// A local stand-in for Meta's Graph API, for development (`svc dev fake-graph`) and tests
// (test/fakes/graph re-exports it). A real HTTP server that takes the three send endpoints —
// WhatsApp Cloud API, Messenger Send API, Instagram messaging — checks token and body as Meta does,
// answers in Meta's format, and records every request it got. The service never imports this
// file; it reaches the fake only through META_GRAPH_URL / META_INSTAGRAM_GRAPH_URL.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  cannedFault,
  type FailKind,
  type FakeChannel,
  type Fault,
  fbtraceId,
  graphError,
  instagramMid,
  invalidParameter,
  invalidToken,
  messengerMid,
  unknownObject,
  wamid,
} from './faults.ts';
import { createOAuth, type FakeOAuthApps, type FakePerson } from './oauth.ts';
import type { FakeObject } from './objects.ts';
import { createPublishing, type PublishingOptions } from './publishing.ts';
import { createRefresh } from './refresh.ts';
import { createTokens } from './tokens.ts';
import { checkMessaging, checkWhatsApp } from './validate.ts';

export type { FailKind, FakeChannel, Fault } from './faults.ts';
export type { FakeOAuthApps, FakePerson } from './oauth.ts';
export type { FakeObject } from './objects.ts';

/** A sender the fake knows: a phone number id, Page id or Instagram account id, and its token. */
export type FakeGraphAccount = {
  token: string;
  channel: FakeChannel;
  /** A phone number's WhatsApp Business Account (tokens.ts: `waba-{id}` unless named). */
  waba?: string;
  /** The Page's name, the number's verified name or the Instagram username its reads answer. */
  name?: string;
  /** More tokens that act for the same account: an agency's Page token beside the business's own. */
  tokens?: string[];
};

/** Whether `token` acts for the account. */
export const actsFor = (account: FakeGraphAccount, token: string) =>
  account.token === token || (account.tokens?.includes(token) ?? false);

export type FakeGraphOptions = {
  port?: number;
  host?: string;
  /**
   * Sender id → token and channel. Unknown ids are answered as Graph does (code 100, subcode 33),
   * wrong tokens with code 190. Omitted: any bearer token is taken for any id, and the channel is
   * read from the body (development).
   */
  accounts?: Record<string, FakeGraphAccount>;
  /** Delay before every answer. */
  latencyMs?: number;
  /** Called with each request once it is answered (or left hanging); the CLI prints it. */
  onRequest?: (request: RecordedRequest) => void;
  /** The apps whose sign-ins the fake answers (oauth.ts); omitted: any app id and secret. */
  apps?: FakeOAuthApps;
  /** People signed in at the fake Meta, the last one current (oauth.ts). */
  persons?: FakePerson[];
} & PublishingOptions;

export type RecordedRequest = {
  method: string;
  /** The path without its query, e.g. /v26.0/106540352242922/messages */
  path: string;
  query: Record<string, string>;
  /** Lower-cased names, as received (Authorization included: tests assert it). */
  headers: Record<string, string>;
  /** Parsed JSON (or form fields, JSON-decoded); the raw text when it did not parse. */
  body: unknown;
  rawBody: string;
  version: string | null;
  senderId: string | null;
  channel: FakeChannel | null;
  /** What the fake answered; null while hanging or when it dropped the connection. */
  response: Fault | null;
};

export type FakeGraph = {
  url: string;
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[];
  /** The requests that were answered with a message id: what Meta would have sent. */
  sent(): RecordedRequest[];
  /** The next `n` well-formed sends get this failure instead of a message id. */
  failNext(n: number, kind: FailKind | Fault): void;
  setLatency(ms: number): void;
  setAccount(id: string, account: FakeGraphAccount): void;
  /** What people see on a Page (`messenger` account) or Instagram account: posts, media, oldest first. */
  published(accountId: string): FakeObject[];
  /**
   * A post (Page) or media (Instagram account) made by someone else, a person or another tool, as
   * /feed or media_publish would make it; no request is recorded. Synchronous, so a test can make
   * it happen at an exact point (in `onRequest`).
   */
  postElsewhere(accountId: string, text: string): FakeObject;
  /** The next `n` top-level Instagram containers end ERROR or EXPIRED instead of FINISHED. */
  failContainers(n: number, end: 'ERROR' | 'EXPIRED'): void;
  /** Insights (and Facebook's shares/comments counts) the fake answers for one object. */
  setInsights(id: string, values: Record<string, unknown>): void;
  /** Every later call with this token fails with code 190, subcode 460 (the session was invalidated). */
  /** The next `n` GETs fail with `fault`, Graph's 500 by default (refresh.ts): an outage during a check. */
  failReadsNext(n: number, fault?: Fault): void;
  revokeToken(token: string): void;
  /** Every later call with this token fails with code 190, subcode 463 (expired). */
  expireToken(token: string): void;
  /** The webhook fields the app subscribed to on an account or WABA (subscribed_apps); null if none. */
  subscriptions(id: string): string[] | null;
  /** Signs `person` in at the fake Meta: the dialogs grant what they own (oauth.ts). */
  addPerson(person: FakePerson): void;
  /** How many times a sign-in's token subscribed the app to an account's webhooks. */
  oauthSubscriptions(id: string): number;
  /** Forgets requests, pending failures and published objects; latency and accounts return to the options'. */
  reset(): void;
  close(): Promise<void>;
};

const PATH = /^\/(?:(v\d+\.\d+)\/)?([^/]+)\/messages\/?$/;
/** Any other object or edge: /{version}/{id} or /{version}/{id}/{edge} (publishing, reads, insights). */
const OBJECT = /^\/(?:(v\d+\.\d+)\/)?([^/]+)(?:\/([a-z_]+))?\/?$/;

export async function startFakeGraph(options: FakeGraphOptions = {}): Promise<FakeGraph> {
  const requests: RecordedRequest[] = [];
  let failures: (FailKind | Fault)[] = [];
  let latencyMs = options.latencyMs ?? 0;
  let accounts = { ...options.accounts };
  const publishing = createPublishing(options);
  const tokens = createTokens(
    () => accounts,
    !options.accounts,
    (id) => publishing.ownerOf(id) !== null,
  );
  const oauth = createOAuth({
    apps: options.apps,
    persons: options.persons,
    setAccount: (id, account) => {
      accounts[id] = account;
    },
  });
  const refresh = createRefresh(
    () => accounts,
    (id, account) => {
      accounts[id] = account;
    },
  );

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const rawBody = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const m = PATH.exec(url.pathname) ?? OBJECT.exec(url.pathname);
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: flatHeaders(req),
      body: parseBody(rawBody, req.headers['content-type']),
      rawBody,
      version: m?.[1] ?? null,
      senderId: m ? decodeURIComponent(m[2] as string) : null,
      channel: null,
      response: null,
    };
    requests.push(record);
    // Sign-ins (oauth.ts): their pages and redirects, and the token exchanges.
    const signIn = oauth.route(record);
    if (signIn) {
      record.response = { status: signIn.status, body: signIn.body };
      res.writeHead(signIn.status, {
        'content-type': signIn.type ?? 'application/json; charset=UTF-8',
        ...(signIn.type ? {} : { 'x-fb-trace-id': fbtraceId() }),
        ...signIn.headers,
      });
      res.end(typeof signIn.body === 'string' ? signIn.body : JSON.stringify(signIn.body));
      return options.onRequest?.(record);
    }
    const outcome = decide(record);
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
    if (outcome === 'hang') return options.onRequest?.(record);
    if (outcome === 'drop' || outcome === 'lost') {
      req.socket.destroy();
      return options.onRequest?.(record);
    }
    record.response = outcome;
    // A string body goes out as is: what a proxy or load balancer in front of Graph might answer.
    if (typeof outcome.body === 'string') {
      res.writeHead(outcome.status, { 'content-type': 'text/html; charset=UTF-8' });
      res.end(outcome.body);
      return options.onRequest?.(record);
    }
    const errorBody = (outcome.body as { error?: { code?: number; message?: string } } | null)?.error;
    res.writeHead(outcome.status, {
      'content-type': 'application/json; charset=UTF-8',
      'x-fb-trace-id': fbtraceId(),
      ...(record.version ? { 'facebook-api-version': record.version } : {}),
      // Graph names a bad token in this header too.
      ...(errorBody?.code === 190
        ? { 'www-authenticate': `OAuth "Facebook Platform" "invalid_token" "${errorBody.message}"` }
        : {}),
    });
    res.end(JSON.stringify(outcome.body));
    options.onRequest?.(record);
  };

  /** Routing, token, body, then any failure a test asked for, then success. */
  const decide = (r: RecordedRequest): Fault | 'hang' | 'drop' | 'lost' => {
    if (!r.senderId) return graphError(400, 2500, `Unknown path components: ${r.path}`, 'OAuthException');
    const asked =
      refresh.outage(r) ??
      tokens.refusal(bearer(r)) ??
      refresh.answer(r, bearer(r)) ??
      tokens.answer(r, bearer(r));
    if (asked) return asked;
    if (!PATH.test(r.path)) return object(r);
    if (r.method !== 'POST') return unknownObject(r.senderId);
    const body = r.body && typeof r.body === 'object' ? (r.body as Record<string, unknown>) : null;
    const account = accounts[r.senderId];
    const channel: FakeChannel = account?.channel ?? guessChannel(body);
    r.channel = channel;
    if (options.accounts && !account) return unknownObject(r.senderId);
    const token = bearer(r);
    if (!token || (account && !actsFor(account, token))) return invalidToken(channel);
    if (!body) return invalidParameter(channel, 'The request body must be JSON.');
    const problem = channel === 'whatsapp' ? checkWhatsApp(body) : checkMessaging(body, channel);
    if (problem) return invalidParameter(channel, problem);
    const planned = failures.shift();
    const failure = planned === 'pass' ? undefined : planned;
    if (failure === 'lost') {
      accepted(channel, body);
      return 'lost';
    }
    if (failure === 'hang' || failure === 'drop') return failure;
    if (failure) return typeof failure === 'string' ? cannedFault(failure, channel) : failure;
    return accepted(channel, body);
  };

  /**
   * Publishing and reads (publishing.ts): the path's id is an account (a Page is a `messenger`
   * account) or an object one owns; the owner's token is the one that works. Planned failures
   * apply to creations (POST) only.
   */
  const object = (r: RecordedRequest): Fault | 'hang' | 'drop' | 'lost' => {
    const id = r.senderId as string;
    const edge = OBJECT.exec(r.path)?.[3] ?? null;
    const ownerId = accounts[id] || !options.accounts ? id : publishing.ownerOf(id);
    const owner = ownerId ? accounts[ownerId] : undefined;
    if (options.accounts && !owner) return unknownObject(id);
    const channel: FakeChannel =
      owner?.channel ?? (edge === 'media' || edge === 'media_publish' ? 'instagram' : 'messenger');
    r.channel = channel;
    r.senderId = ownerId;
    const token = bearer(r);
    if (!token || (owner && !actsFor(owner, token))) return invalidToken(channel);
    if (r.method === 'GET') {
      // Graph's paging links are absolute and carry the token, whichever way it came.
      const link = (q: Record<string, string>) =>
        `http://${r.headers.host}${r.path}?${new URLSearchParams({ access_token: token, ...q })}`;
      return publishing.read(id, edge, r.query, link);
    }
    if (r.method !== 'POST' || !edge) return unknownObject(id);
    const body = r.body && typeof r.body === 'object' ? (r.body as Record<string, unknown>) : null;
    if (!body) return invalidParameter(channel, 'The request body must be JSON or form fields.');
    const planned = failures.shift();
    const failure = planned === 'pass' ? undefined : planned;
    if (failure === 'hang' || failure === 'drop') return failure;
    if (failure && failure !== 'lost')
      return typeof failure === 'string' ? cannedFault(failure, channel) : failure;
    const answer = publishing.create(id, channel === 'instagram' ? 'instagram' : 'messenger', edge, body);
    // 'lost': Meta did it, and the answer never arrived (a crash or a cut connection after the call).
    return failure === 'lost' && answer.status === 200 ? 'lost' : answer;
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(err), type: 'FakeGraphError', code: 1 } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  return {
    url: `http://${host}:${port}`,
    requests,
    sent: () => requests.filter((r) => r.response && r.response.status === 200 && PATH.test(r.path)),
    published: (id) => publishing.published(id),
    postElsewhere: (id, text) =>
      publishing.elsewhere(id, accounts[id]?.channel === 'instagram' ? 'instagram' : 'messenger', text),
    failContainers: (n, end) => publishing.failContainers(n, end),
    setInsights: (id, values) => publishing.setInsights(id, values),
    failNext(n, kind) {
      for (let i = 0; i < n; i++) failures.push(kind);
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    setAccount(id, account) {
      accounts[id] = account;
    },
    failReadsNext: (n, fault) => refresh.failReadsNext(n, fault),
    revokeToken: (token) => tokens.revoke(token),
    expireToken: (token) => tokens.expire(token),
    subscriptions: (id) => tokens.subscriptions(id),
    addPerson: (person) => oauth.addPerson(person),
    oauthSubscriptions: (id) => oauth.subscriptions(id),
    reset() {
      tokens.reset();
      oauth.reset();
      refresh.reset();
      requests.length = 0;
      failures = [];
      publishing.reset();
      latencyMs = options.latencyMs ?? 0;
      accounts = { ...options.accounts };
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging requests hold their sockets open; a test's close must not wait for them.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Meta's success answers: the Cloud API's contacts/messages, the Send API's recipient/message id. */
function accepted(channel: FakeChannel, body: Record<string, unknown>): Fault {
  if (channel === 'whatsapp') {
    const to = body.to as string;
    const template = (body.type ?? 'text') === 'template';
    return {
      status: 200,
      body: {
        messaging_product: 'whatsapp',
        contacts: [{ input: to, wa_id: to.replace(/^\+/, '') }],
        messages: [{ id: wamid(), ...(template ? { message_status: 'accepted' } : {}) }],
      },
    };
  }
  const recipient = (body.recipient as { id: string }).id;
  return {
    status: 200,
    body: { recipient_id: recipient, message_id: channel === 'messenger' ? messengerMid() : instagramMid() },
  };
}

// Without configured accounts: the Cloud API body names its product; an untagged body without
// messaging_type is Instagram's documented shape; the rest is Messenger.
function guessChannel(body: Record<string, unknown> | null): FakeChannel {
  if (body?.messaging_product === 'whatsapp') return 'whatsapp';
  return body?.messaging_type === undefined ? 'instagram' : 'messenger';
}

/** Graph takes the token as a bearer header or an access_token parameter. */
function bearer(r: RecordedRequest): string | null {
  const h = /^(?:Bearer|OAuth)\s+(\S+)$/i.exec(r.headers.authorization ?? '');
  if (h?.[1]) return h[1];
  const fromBody = (r.body as { access_token?: unknown } | null)?.access_token;
  return r.query.access_token || (typeof fromBody === 'string' ? fromBody : null) || null;
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** JSON, or form fields whose values are JSON (Meta's curl examples send `recipient={"id":…}`). */
function parseBody(raw: string, contentType: string | undefined): unknown {
  if (!raw) return null;
  if ((contentType ?? '').includes('application/x-www-form-urlencoded')) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(raw)) {
      try {
        out[k] = /^[[{]/.test(v) ? JSON.parse(v) : v;
      } catch {
        out[k] = v;
      }
    }
    return out;
  }
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
