// The fake Graph API's sign-ins (docs/connecting-accounts.md): Facebook Login's dialog and
// Embedded Signup's (one /{version}/dialog/oauth page), the code exchange and fb_exchange_token,
// /me/accounts, a WhatsApp Business Account's phone numbers, subscribed_apps on what a sign-in
// granted; Instagram Login's authorization window, its code exchange (api.instagram.com's POST
// /oauth/access_token), ig_exchange_token, refresh_access_token and /me. A fake person (addPerson)
// owns the Pages, Instagram accounts and WhatsApp numbers the dialogs grant; the last one added is
// the person signed in at the fake Meta. Codes are single-use, expire after ten minutes and are
// bound to the app and redirect_uri; the app secret is checked as Meta does; errors are Meta's
// shapes. Tokens issued for an account are registered with the fake's accounts map (setAccount),
// so sends and reads with them work. Development and tests only.
import { randomBytes } from 'node:crypto';
import { type FakeChannel, graphError, unknownObject } from './faults.ts';

export type FakePerson = {
  name: string;
  pages?: { id: string; name: string; instagram?: { id: string; username: string } }[];
  wabas?: {
    id: string;
    phone_numbers: { id: string; display_phone_number: string; verified_name: string }[];
  }[];
  /** The Instagram professional account Instagram Login signs in to. */
  instagram?: { id: string; username: string };
};

/** App id → secret, for the Meta app and the Instagram app. Omitted: any id and secret are taken (development). */
export type FakeOAuthApps = {
  meta?: { id: string; secret: string };
  instagram?: { id: string; secret: string };
};

/** What a route answers: JSON, a page, or a redirect. */
export type OAuthAnswer = { status: number; body: unknown; type?: string; headers?: Record<string, string> };

type Req = {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  headers: Record<string, string>;
};

type Code = {
  app: string;
  redirectUri: string;
  person: FakePerson;
  kind: 'facebook' | 'whatsapp' | 'instagram';
  at: number;
  used: boolean;
};
type Token =
  | { kind: 'user'; person: FakePerson; app: string }
  | { kind: 'business'; person: FakePerson; waba: string }
  | { kind: 'instagram'; person: FakePerson; app: string; long: boolean; expiresAt: number };

const CODE_TTL_MS = 10 * 60_000;
const SIXTY_DAYS = 5_184_000;
const mint = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`;
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const json = (body: unknown, status = 200): OAuthAnswer => ({ status, body });
const oauthError = (message: string, code: number, subcode?: number) =>
  graphError(400, code, message, 'OAuthException', subcode);
// Instagram's token endpoints answer in their own shape.
const igError = (message: string): OAuthAnswer =>
  json({ error_type: 'OAuthException', code: 400, error_message: message }, 400);
const redirect = (to: string): OAuthAnswer => ({
  status: 302,
  body: '',
  type: 'text/html',
  headers: { location: to },
});
const withQuery = (uri: string, q: Record<string, string>, hash: string) => {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(q)) url.searchParams.set(k, v);
  return `${url}${hash}`;
};

export function createOAuth(opts: {
  apps?: FakeOAuthApps;
  persons?: FakePerson[];
  setAccount: (id: string, a: { token: string; channel: FakeChannel }) => void;
}) {
  let persons = [...(opts.persons ?? [])];
  const codes = new Map<string, Code>();
  const tokens = new Map<string, Token>();
  const pageTokens = new Map<string, string>();
  const subscriptions = new Map<string, number>();
  const signedIn = () => persons[persons.length - 1];
  const appOk = (which: 'meta' | 'instagram', id: string | undefined) =>
    !opts.apps?.[which] || opts.apps[which]?.id === id;
  const secretOk = (which: 'meta' | 'instagram', secret: string | undefined) =>
    !opts.apps?.[which] || opts.apps[which]?.secret === secret;
  const bearer = (r: Req) =>
    /^Bearer\s+(\S+)$/i.exec(r.headers.authorization ?? '')?.[1] ?? r.query.access_token ?? '';

  /** The page a person sees at Meta: who is signed in, what the app gets, Continue or Cancel. */
  function dialog(r: Req, action: string, kind: Code['kind']): OAuthAnswer {
    const q = r.query;
    const which = kind === 'instagram' ? 'instagram' : 'meta';
    if (!appOk(which, q.client_id))
      return {
        status: 400,
        type: 'text/html',
        body: page('Error', '<p>Invalid App ID: the app does not exist.</p>'),
      };
    if (!q.redirect_uri || !URL.canParse(q.redirect_uri))
      return {
        status: 400,
        type: 'text/html',
        body: page('Error', '<p>URL blocked: the redirect_uri is not valid.</p>'),
      };
    const person = signedIn();
    if (!person)
      return {
        status: 200,
        type: 'text/html',
        body: page('Log in', '<p>Nobody is signed in at the fake Meta (addPerson).</p>'),
      };
    const grants =
      kind === 'facebook'
        ? (person.pages ?? []).map(
            (p) => `Page ${p.name}${p.instagram ? ` and Instagram @${p.instagram.username}` : ''}`,
          )
        : kind === 'whatsapp'
          ? (person.wabas ?? [])
              .slice(0, 1)
              .flatMap((w) =>
                w.phone_numbers.map((n) => `WhatsApp ${n.display_phone_number} (${n.verified_name})`),
              )
          : person.instagram
            ? [`Instagram @${person.instagram.username}`]
            : [];
    const hidden = Object.entries({ ...q, kind })
      .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
      .join('');
    const body = `<p>Signed in as <strong>${esc(person.name)}</strong>.</p>
<p>The app asks for: ${esc(q.scope ?? q.config_id ?? '')}</p>
<ul>${grants.map((g) => `<li>${esc(g)}</li>`).join('') || '<li>Nothing to share</li>'}</ul>
<form method="post" action="${action}">${hidden}
<button type="submit" name="decision" value="continue">Continue</button>
<button type="submit" name="decision" value="cancel">Cancel</button></form>`;
    const title =
      kind === 'instagram'
        ? 'Log in to Instagram'
        : kind === 'whatsapp'
          ? 'WhatsApp Business (Embedded Signup)'
          : 'Facebook Login';
    return { status: 200, type: 'text/html; charset=utf-8', body: page(title, body) };
  }

  /** Continue or Cancel: back to redirect_uri as Meta sends people back. */
  function decide(r: Req): OAuthAnswer {
    const f = (r.body ?? {}) as Record<string, string>;
    const kind = f.kind as Code['kind'];
    const person = signedIn();
    if (!person || !f.redirect_uri || !URL.canParse(f.redirect_uri))
      return json(oauthError('Invalid request', 100).body, 400);
    const hash = kind === 'instagram' ? '#_' : '#_=_';
    const state: Record<string, string> = f.state ? { state: f.state } : {};
    const waba = (person.wabas ?? [])[0];
    if (f.decision !== 'continue') {
      const to =
        kind === 'instagram'
          ? withQuery(
              f.redirect_uri,
              {
                error: 'access_denied',
                error_reason: 'user_denied',
                error_description: 'The user denied your request.',
                ...state,
              },
              hash,
            )
          : withQuery(
              f.redirect_uri,
              {
                error: 'access_denied',
                error_code: '200',
                error_description: 'Permissions error',
                error_reason: 'user_denied',
                ...state,
              },
              hash,
            );
      if (kind === 'whatsapp')
        return sessionInfo(
          {
            type: 'WA_EMBEDDED_SIGNUP',
            event: 'CANCEL',
            data: { current_step: 'WABA_PHONE_VERIFICATION' },
            version: 3,
          },
          to,
        );
      return redirect(to);
    }
    const code = mint(kind === 'instagram' ? 'IGcode' : 'AQ');
    codes.set(code, {
      app: f.client_id ?? '',
      redirectUri: f.redirect_uri,
      person,
      kind,
      at: Date.now(),
      used: false,
    });
    const to = withQuery(f.redirect_uri, { code, ...state }, hash);
    if (kind === 'whatsapp')
      return sessionInfo(
        {
          type: 'WA_EMBEDDED_SIGNUP',
          event: 'FINISH',
          data: {
            phone_number_id: waba?.phone_numbers[0]?.id ?? '',
            waba_id: waba?.id ?? '',
            business_id: '1000000001',
          },
          version: 3,
        },
        to,
      );
    return redirect(to);
  }

  /** Embedded Signup tells the window that opened it what was set up, as a JSON string, then goes on. */
  function sessionInfo(message: unknown, to: string): OAuthAnswer {
    const script = `<script>if (window.opener) window.opener.postMessage(${JSON.stringify(JSON.stringify(message))}, '*');
location.replace(${JSON.stringify(to)});</script>`;
    return { status: 200, type: 'text/html; charset=utf-8', body: page('Finishing', script) };
  }

  /** A code, once, by the app it was issued to, for the redirect_uri it was issued with. */
  function takeCode(
    code: string | undefined,
    app: string | undefined,
    redirectUri: string | undefined,
    instagram: boolean,
  ) {
    const c = code ? codes.get(code) : undefined;
    const fail = (message: string, subcode: number) =>
      instagram ? igError(message) : oauthError(message, 100, subcode);
    if (!c || c.app !== app || (c.kind === 'instagram') !== instagram)
      return fail(instagram ? 'Invalid authorization code' : 'Invalid verification code format.', 36007);
    if (c.used)
      return fail(
        instagram ? 'This authorization code has been used' : 'This authorization code has been used.',
        36009,
      );
    if (Date.now() - c.at > CODE_TTL_MS) return fail('This authorization code has expired.', 36007);
    if (c.redirectUri !== redirectUri)
      return fail(
        instagram
          ? 'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request'
          : 'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
        36008,
      );
    c.used = true;
    return c;
  }

  const pageToken = (pageId: string) => {
    let t = pageTokens.get(pageId);
    if (!t) {
      t = mint('EAAPage');
      pageTokens.set(pageId, t);
    }
    return t;
  };

  function graphToken(r: Req): OAuthAnswer {
    const q = r.query;
    if (!appOk('meta', q.client_id))
      return oauthError('Error validating application. Invalid application ID.', 101);
    if (!secretOk('meta', q.client_secret)) return oauthError('Error validating client secret.', 1);
    if (q.grant_type === 'fb_exchange_token') {
      const t = tokens.get(q.fb_exchange_token ?? '');
      if (t?.kind !== 'user')
        return oauthError('Invalid OAuth access token - Cannot parse access token', 190);
      const long = mint('EAALong');
      tokens.set(long, { kind: 'user', person: t.person, app: t.app });
      return json({ access_token: long, token_type: 'bearer', expires_in: SIXTY_DAYS });
    }
    const c = takeCode(q.code, q.client_id, q.redirect_uri, false);
    if (!('kind' in c)) return c;
    if (c.kind === 'whatsapp') {
      const waba = (c.person.wabas ?? [])[0];
      const token = mint('EAABiz');
      tokens.set(token, { kind: 'business', person: c.person, waba: waba?.id ?? '' });
      if (waba) {
        opts.setAccount(waba.id, { token, channel: 'whatsapp' });
        for (const n of waba.phone_numbers) opts.setAccount(n.id, { token, channel: 'whatsapp' });
      }
      // The business token of Embedded Signup does not expire.
      return json({ access_token: token, token_type: 'bearer' });
    }
    const token = mint('EAAUser');
    tokens.set(token, { kind: 'user', person: c.person, app: c.app });
    return json({ access_token: token, token_type: 'bearer', expires_in: 5400 });
  }

  function meAccounts(r: Req): OAuthAnswer {
    const t = tokens.get(bearer(r));
    if (t?.kind !== 'user') return oauthError('Invalid OAuth access token - Cannot parse access token', 190);
    const withIg = (r.query.fields ?? '').includes('instagram_business_account');
    const data = (t.person.pages ?? []).map((p) => {
      const token = pageToken(p.id);
      opts.setAccount(p.id, { token, channel: 'messenger' });
      if (p.instagram) opts.setAccount(p.instagram.id, { token, channel: 'instagram' });
      return {
        access_token: token,
        category: 'Shopping & retail',
        category_list: [{ id: '200600219953504', name: 'Shopping & retail' }],
        name: p.name,
        id: p.id,
        tasks: ['ANALYZE', 'ADVERTISE', 'MODERATE', 'CREATE_CONTENT', 'MANAGE'],
        ...(withIg && p.instagram
          ? { instagram_business_account: { id: p.instagram.id, username: p.instagram.username } }
          : {}),
      };
    });
    const cursor = Buffer.from(String(data.length)).toString('base64url');
    return json({ data, paging: { cursors: { before: cursor, after: cursor } } });
  }

  function phoneNumbers(wabaId: string, r: Req): OAuthAnswer {
    const t = tokens.get(bearer(r));
    if (t?.kind !== 'business' || t.waba !== wabaId) return unknownObject(wabaId);
    const waba = (t.person.wabas ?? []).find((w) => w.id === wabaId);
    const data = (waba?.phone_numbers ?? []).map((n) => ({
      verified_name: n.verified_name,
      code_verification_status: 'VERIFIED',
      display_phone_number: n.display_phone_number,
      quality_rating: 'GREEN',
      platform_type: 'CLOUD_API',
      throughput: { level: 'STANDARD' },
      id: n.id,
    }));
    return json({ data, paging: { cursors: { before: 'QVFI', after: 'QVFI' } } });
  }

  /** The app subscribed to what a sign-in granted: a Page with its token, a WABA with its business token. */
  function subscribe(id: string, r: Req): OAuthAnswer | null {
    const token = bearer(r);
    const isPage = pageTokens.has(id);
    const t = tokens.get(token);
    const isWaba = persons.some((p) => (p.wabas ?? []).some((w) => w.id === id));
    if (!isPage && !isWaba) return null;
    if (isPage ? pageTokens.get(id) !== token : t?.kind !== 'business' || t.waba !== id)
      return unknownObject(id);
    subscriptions.set(id, (subscriptions.get(id) ?? 0) + 1);
    return json({ success: true });
  }

  function instagramToken(r: Req): OAuthAnswer {
    const f = (r.body ?? {}) as Record<string, string>;
    if (!appOk('instagram', f.client_id)) return igError('Invalid platform app');
    if (!secretOk('instagram', f.client_secret)) return igError('Error validating client secret.');
    if (f.grant_type !== 'authorization_code') return igError('Invalid grant_type');
    const c = takeCode(f.code, f.client_id, f.redirect_uri, true);
    if (!('kind' in c)) return c;
    const ig = c.person.instagram;
    if (!ig) return igError('The user has no Instagram professional account');
    const token = mint('IGQShort');
    tokens.set(token, {
      kind: 'instagram',
      person: c.person,
      app: c.app,
      long: false,
      expiresAt: Date.now() + 3_600_000,
    });
    return json({
      data: [
        {
          access_token: token,
          user_id: ig.id,
          permissions:
            'instagram_business_basic,instagram_business_manage_messages,instagram_business_content_publish',
        },
      ],
    });
  }

  function instagramLong(r: Req, refresh: boolean): OAuthAnswer | null {
    const q = r.query;
    // Graph takes the token in the query (as Meta's examples put it) or as a bearer.
    const t = tokens.get(q.access_token ?? bearer(r));
    // A refresh of a token no sign-in issued is the rest of the fake's (refresh.ts).
    if (refresh && !t) return null;
    if (!refresh && !secretOk('instagram', q.client_secret))
      return oauthError('Error validating client secret.', 1);
    if (q.grant_type !== (refresh ? 'ig_refresh_token' : 'ig_exchange_token'))
      return oauthError('Unsupported grant type', 100);
    if (t?.kind !== 'instagram' || t.long !== refresh || t.expiresAt < Date.now())
      return oauthError('Invalid OAuth access token - Cannot parse access token', 190);
    const token = mint('IGQLong');
    tokens.set(token, { ...t, long: true, expiresAt: Date.now() + SIXTY_DAYS * 1000 });
    if (t.person.instagram) opts.setAccount(t.person.instagram.id, { token, channel: 'instagram' });
    return json({ access_token: token, token_type: 'bearer', expires_in: SIXTY_DAYS });
  }

  /** /me and /me/subscribed_apps for an Instagram Login token this fake issued; null for any other token. */
  function instagramMe(r: Req, edge: string | undefined): OAuthAnswer | null {
    const t = tokens.get(bearer(r));
    if (t?.kind !== 'instagram' || !t.long || !t.person.instagram) return null;
    const ig = t.person.instagram;
    if (edge === 'subscribed_apps' && r.method === 'POST') {
      subscriptions.set(ig.id, (subscriptions.get(ig.id) ?? 0) + 1);
      return json({ success: true });
    }
    if (edge) return null;
    return json({ user_id: ig.id, username: ig.username, id: `${ig.id}9` });
  }

  return {
    /** The answer for a sign-in request, or null for everything else (the rest of the fake answers it). */
    route(r: Req): OAuthAnswer | null {
      const p = r.path.replace(/\/+$/, '');
      const v = /^\/(?:v\d+\.\d+\/)?(.*)$/.exec(p)?.[1] ?? '';
      if (r.method === 'GET' && /^\/v\d+\.\d+\/dialog\/oauth$/.test(p))
        // Embedded Signup is the same dialog with its `extras` (FB.login passes them through).
        return dialog(r, `${p}/decide`, r.query.extras ? 'whatsapp' : 'facebook');
      if (r.method === 'POST' && /^\/v\d+\.\d+\/dialog\/oauth\/decide$/.test(p)) return decide(r);
      if (r.method === 'GET' && p === '/oauth/authorize')
        return dialog(r, '/oauth/authorize/decide', 'instagram');
      if (r.method === 'POST' && p === '/oauth/authorize/decide') return decide(r);
      if (r.method === 'POST' && p === '/oauth/access_token') return instagramToken(r);
      if (r.method === 'GET' && v === 'oauth/access_token') return graphToken(r);
      if (r.method === 'GET' && v === 'access_token') return instagramLong(r, false);
      if (r.method === 'GET' && v === 'refresh_access_token') return instagramLong(r, true);
      if (r.method === 'GET' && v === 'me/accounts') return meAccounts(r);
      const me = /^me(?:\/([a-z_]+))?$/.exec(v);
      if (me) return instagramMe(r, me[1]);
      const edge = /^([^/]+)\/(phone_numbers|subscribed_apps)$/.exec(v);
      if (
        edge?.[2] === 'phone_numbers' &&
        r.method === 'GET' &&
        persons.some((x) => (x.wabas ?? []).some((w) => w.id === edge[1]))
      )
        return phoneNumbers(edge[1] as string, r);
      if (edge?.[2] === 'subscribed_apps' && r.method === 'POST') return subscribe(edge[1] as string, r);
      return null;
    },
    addPerson(person: FakePerson) {
      persons.push(person);
    },
    /** How many times the app was subscribed to an account's webhooks through a sign-in's token. */
    subscriptions: (id: string) => subscriptions.get(id) ?? 0,
    reset() {
      persons = [...(opts.persons ?? [])];
      codes.clear();
      tokens.clear();
      pageTokens.clear();
      subscriptions.clear();
    },
  };
}

function page(title: string, body: string) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${esc(title)} (fake Meta)</title></head>
<body><main><h1>${esc(title)}</h1>${body}</main></body></html>`;
}
