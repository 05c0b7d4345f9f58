// The fake's token model: what a token is (whose it is, whether it still works) and the calls that
// ask about it, as Meta answers them: GET /me (a Page token's /me is the Page; an Instagram Login
// token's /me has user_id and username), an account read by id (a phone number, a Page, an
// Instagram account), GET /debug_token, POST/GET /{id}/subscribed_apps (recorded) and a WABA's
// phone_numbers. The server's `accounts` map stays the truth of which token acts for which id;
// without it ("open" mode) any token acts for any id, and its /me is the account it last read.
// `revoke` and `expire` make every later call with a token fail with code 190 as Graph does.
// Development and tests only.
import type { FakeChannel, Fault } from './faults.ts';
import { graphError, unknownObject } from './faults.ts';

/** The server's account shape (server.ts FakeGraphAccount). */
type Account = { token: string; channel: FakeChannel; waba?: string; name?: string; tokens?: string[] };
const acts = (a: Account, token: string) => a.token === token || (a.tokens?.includes(token) ?? false);
type Request = {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  senderId: string | null;
};

/** The app the fake plays: debug_token names it, subscribed_apps lists it. */
export const FAKE_APP = { id: '987654321098765', name: 'Fake Graph App' };

// Graph's code 190 subcodes: 463 expired; 460 the session was invalidated (password changed, or the
// person or Meta ended it), which is what a revoked token answers.
const EXPIRED = { subcode: 463, message: 'Error validating access token: Session has expired.' };
const REVOKED = {
  subcode: 460,
  message:
    'Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.',
};

const SUBSCRIBE = /^\/(?:v\d+\.\d+\/)?([^/]+)\/(subscribed_apps|phone_numbers)\/?$/;
const READ = /^\/(?:v\d+\.\d+\/)?([^/]+)\/?$/;

/** The WABA a phone number belongs to unless a test names one. */
export const wabaOf = (phoneId: string, account?: Account) => account?.waba ?? `waba-${phoneId}`;

export function createTokens(
  accounts: () => Record<string, Account>,
  open: boolean,
  isObject: (id: string) => boolean,
) {
  const dead = new Map<string, typeof EXPIRED>();
  /** Open mode: the account a token last read, which its /me then is. */
  const lastRead = new Map<string, { id: string; channel: FakeChannel }>();
  const subscriptions = new Map<string, string[]>();

  const owned = (token: string) => Object.entries(accounts()).filter(([, a]) => acts(a, token));
  const channelOf = (token: string): FakeChannel | null =>
    owned(token)[0]?.[1].channel ?? lastRead.get(token)?.channel ?? null;
  /** The token's own account for /me: Instagram when the fields ask for user_id, else a Page, else any. */
  const meOf = (token: string, wantsInstagram: boolean): { id: string; account: Account } | null => {
    if (open && !owned(token).length) {
      const r = lastRead.get(token);
      return r ? { id: r.id, account: { token, channel: r.channel } } : null;
    }
    const mine = owned(token);
    const pick =
      mine.find(([, a]) => a.channel === (wantsInstagram ? 'instagram' : 'messenger')) ??
      mine.find(([, a]) => a.channel !== 'instagram') ??
      mine[0];
    return pick ? { id: pick[0], account: pick[1] } : null;
  };

  /** The account `id` is, when the token acts for it; a Fault when it does not. */
  const accountFor = (id: string, token: string, channel: FakeChannel): Account | Fault => {
    const a = accounts()[id];
    if (open && !a) return { token, channel };
    if (!a) return unknownObject(id);
    if (!acts(a, token)) return invalidToken(a.channel);
    return a;
  };

  const fields = (r: Request) => (r.query.fields ?? '').split(',');
  const readChannel = (r: Request): FakeChannel => {
    const f = fields(r);
    if (f.includes('display_phone_number') || f.includes('verified_name')) return 'whatsapp';
    return f.includes('username') || f.includes('user_id') ? 'instagram' : 'messenger';
  };

  function describe(id: string, a: Account): Record<string, unknown> {
    if (a.channel === 'whatsapp')
      return { id, display_phone_number: '+1 555-010-0000', verified_name: a.name ?? `Business ${id}` };
    if (a.channel === 'instagram') return { id, user_id: id, username: a.name ?? `account_${id}` };
    return { id, name: a.name ?? `Page ${id}` };
  }

  function debugToken(input: string): Fault {
    const base = { app_id: FAKE_APP.id, application: FAKE_APP.name, data_access_expires_at: days(90) };
    const gone = dead.get(input);
    const mine = open && !owned(input).length ? lastReadAsAccounts(input) : owned(input);
    if (gone || !mine.length)
      return ok({
        data: {
          ...base,
          type: 'USER',
          is_valid: false,
          expires_at: 0,
          scopes: [],
          error: gone
            ? { code: 190, message: gone.message, subcode: gone.subcode }
            : { code: 190, message: 'Invalid OAuth access token - Cannot parse access token' },
        },
      });
    const [firstId, first] = mine[0] as [string, Account];
    const ids = (c: FakeChannel) =>
      mine.filter(([, a]) => a.channel === c).map(([id, a]) => (c === 'whatsapp' ? wabaOf(id, a) : id));
    const granular = [
      ...(ids('whatsapp').length
        ? [
            { scope: 'whatsapp_business_management', target_ids: [...new Set(ids('whatsapp'))] },
            { scope: 'whatsapp_business_messaging', target_ids: [...new Set(ids('whatsapp'))] },
          ]
        : []),
      ...(ids('messenger').length
        ? [
            { scope: 'pages_messaging', target_ids: ids('messenger') },
            { scope: 'pages_manage_metadata', target_ids: ids('messenger') },
          ]
        : []),
    ];
    return ok({
      data: {
        ...base,
        type: first.channel === 'messenger' ? 'PAGE' : 'USER',
        is_valid: true,
        issued_at: Math.floor(Date.now() / 1000) - 60,
        expires_at: 0,
        scopes: granular.map((g) => g.scope),
        granular_scopes: granular,
        ...(first.channel === 'messenger' ? { profile_id: firstId } : {}),
        user_id: `user-of-${firstId}`,
      },
    });
  }

  const lastReadAsAccounts = (token: string): [string, Account][] => {
    const r = lastRead.get(token);
    return r ? [[r.id, { token, channel: r.channel }]] : [];
  };

  function subscribe(r: Request, id: string, token: string): Fault {
    let target = id;
    if (id === 'me') {
      const me = meOf(token, true);
      if (!me) return invalidToken('instagram');
      target = me.id;
    } else if (!open) {
      const wabaPhones = Object.entries(accounts()).filter(
        ([pid, a]) => a.channel === 'whatsapp' && wabaOf(pid, a) === id,
      );
      const a = accounts()[id];
      const allowed = wabaPhones.length
        ? wabaPhones.some(([, p]) => acts(p, token))
        : a !== undefined && acts(a, token);
      if (!wabaPhones.length && !a) return unknownObject(id);
      if (!allowed) return graphError(403, 200, '(#200) Permissions error', 'OAuthException');
    }
    if (r.method === 'GET')
      return ok({
        data: subscriptions.has(target)
          ? [{ id: FAKE_APP.id, name: FAKE_APP.name, subscribed_fields: subscriptions.get(target) }]
          : [],
      });
    if (r.method === 'DELETE') {
      subscriptions.delete(target);
      return ok({ success: true });
    }
    const body = (r.body && typeof r.body === 'object' ? r.body : {}) as { subscribed_fields?: unknown };
    const asked =
      r.query.subscribed_fields ?? (typeof body.subscribed_fields === 'string' ? body.subscribed_fields : '');
    subscriptions.set(target, asked ? asked.split(',') : []);
    return ok({ success: true });
  }

  function phoneNumbers(waba: string, token: string): Fault {
    const phones = Object.entries(accounts()).filter(
      ([id, a]) => a.channel === 'whatsapp' && wabaOf(id, a) === waba,
    );
    if (open && !phones.length && waba.startsWith('waba-'))
      return ok({ data: [describe(waba.slice(5), { token, channel: 'whatsapp' })] });
    if (!phones.length) return unknownObject(waba);
    if (!phones.some(([, a]) => acts(a, token))) return invalidToken('whatsapp');
    return ok({ data: phones.map(([id, a]) => describe(id, a)) });
  }

  return {
    /** 190 for a token revoked or expired: every call with it fails, whatever it asks. */
    refusal(token: string | null): Fault | null {
      const d = token ? dead.get(token) : undefined;
      if (!d || !token) return null;
      const channel = channelOf(token);
      return graphError(channel === 'whatsapp' ? 401 : 400, 190, d.message, 'OAuthException', d.subcode);
    },
    /** The token calls this file answers; null for everything else (sends, publishing, reads of posts). */
    answer(r: Request, token: string | null): Fault | null {
      const sub = SUBSCRIBE.exec(r.path);
      const read = READ.exec(r.path);
      const id = decodeURIComponent((sub?.[1] ?? read?.[1] ?? '') as string);
      if (read && id === 'debug_token') {
        if (!token) return invalidToken('messenger');
        if (!r.query.input_token)
          return graphError(400, 100, 'The parameter input_token is required', 'OAuthException');
        return debugToken(r.query.input_token);
      }
      if (sub && (sub[2] === 'subscribed_apps' || sub[2] === 'phone_numbers')) {
        if (!token) return invalidToken('messenger');
        return sub[2] === 'subscribed_apps' ? subscribe(r, id, token) : phoneNumbers(id, token);
      }
      if (!read || r.method !== 'GET') return null;
      if (id === 'me') {
        if (!token) return invalidToken('messenger');
        const f = fields(r);
        const me = meOf(token, f.includes('user_id') || f.includes('username'));
        if (!me) return open ? ok({ id: '100000000000001', name: 'Fake Person' }) : invalidToken('messenger');
        const d = describe(me.id, me.account);
        if (me.account.channel === 'instagram') return ok({ ...d, id: `9${me.id}` });
        if (me.account.channel === 'whatsapp') return ok({ id: `user-of-${me.id}`, name: 'System User' });
        return ok(d);
      }
      // An account read by its id; objects the account made (posts, media) are publishing.ts's.
      if (isObject(id) || (!open && !accounts()[id])) return null;
      if (!token) return invalidToken(readChannel(r));
      const a = accountFor(id, token, readChannel(r));
      if ('status' in a) return a;
      if (open && !accounts()[id]) lastRead.set(token, { id, channel: a.channel });
      return ok(describe(id, a));
    },
    revoke: (token: string) => void dead.set(token, REVOKED),
    expire: (token: string) => void dead.set(token, EXPIRED),
    /** The webhook fields the app is subscribed to on an account or WABA; null when it is not. */
    subscriptions: (id: string) => subscriptions.get(id) ?? null,
    reset() {
      dead.clear();
      lastRead.clear();
      subscriptions.clear();
    },
  };
}

const ok = (body: unknown): Fault => ({ status: 200, body });
const days = (n: number) => Math.floor(Date.now() / 1000) + n * 86_400;

function invalidToken(channel: FakeChannel): Fault {
  return graphError(
    channel === 'whatsapp' ? 401 : 400,
    190,
    'Invalid OAuth access token - Cannot parse access token',
    'OAuthException',
  );
}
