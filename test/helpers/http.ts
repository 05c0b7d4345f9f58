import { AuthClient } from '@supabase/auth-js';
import { invitationIn, lastMailTo } from './outbox.ts';
import type { TestService } from './service.ts';
import { uniqueEmail } from './service.ts';

export type Session = { access_token: string; refresh_token: string; user: { id: string; email: string } };

/** Calls the service the way a browser or script would: JSON in, status and JSON out. */
export async function call(
  svc: TestService,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { apikey: svc.anonKey, ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${svc.url}${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON came back
  const json: any = text ? JSON.parse(text) : null;
  return { status: res.status, headers: res.headers, json };
}

/** A new account (and organization, when named) with a live session. */
export async function signUp(
  svc: TestService,
  organizationName?: string,
  email = uniqueEmail(),
): Promise<Session> {
  const r = await call(svc, 'POST', '/auth/v1/signup', {
    body: {
      email,
      password: 'password-8',
      data: organizationName ? { organization_name: organizationName } : {},
    },
  });
  if (r.status !== 200) throw new Error(`signup failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json as Session;
}

export async function signIn(svc: TestService, email: string, password = 'password-8'): Promise<Session> {
  const r = await call(svc, 'POST', '/auth/v1/token?grant_type=password', { body: { email, password } });
  if (r.status !== 200) throw new Error(`sign-in failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json as Session;
}

/** The organization an access token acts in. */
export function orgOf(session: Session): string {
  const payload = JSON.parse(
    Buffer.from(session.access_token.split('.')[1] as string, 'base64url').toString(),
  );
  return payload.app_metadata.organization_id;
}

/**
 * Makes `person` a member of the owner's current organization the only way there is: the owner
 * invites their email, they accept with the token from the mail. Returns an access token of `person` acting in it.
 */
export async function inviteAndAccept(
  svc: TestService,
  inviter: Session,
  person: Session,
  role: 'owner' | 'admin' | 'member',
): Promise<string> {
  const invited = await call(svc, 'POST', '/functions/v1/organization-members', {
    token: inviter.access_token,
    body: { email: person.user.email, role },
  });
  if (invited.status !== 201)
    throw new Error(`invite failed: ${invited.status} ${JSON.stringify(invited.json)}`);
  // The token is in the invitation mail only, as it is for a real person.
  const { token } = invitationIn(await lastMailTo(svc, person.user.email));
  const accepted = await call(svc, 'POST', '/functions/v1/invitations', {
    token: person.access_token,
    body: { invitation_id: invited.json.id, action: 'accept', token },
  });
  if (accepted.status !== 200)
    throw new Error(`accept failed: ${accepted.status} ${JSON.stringify(accepted.json)}`);
  const switched = await call(svc, 'POST', '/functions/v1/organization-switch', {
    token: person.access_token,
    body: { organization_id: orgOf(inviter) },
  });
  if (switched.status !== 200)
    throw new Error(`switch failed: ${switched.status} ${JSON.stringify(switched.json)}`);
  return switched.json.access_token;
}

/** @supabase/auth-js pointed at the service with the anon key, keeping no session of its own. */
export const authClient = (svc: TestService) =>
  new AuthClient({
    url: `${svc.url}/auth/v1`,
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${svc.anonKey}` },
    persistSession: false,
    autoRefreshToken: false,
  });
