// Members join by invitation: an owner or admin invites an email, the person holding an account
// with that email and the mail's token accepts (or declines). The inviter's answer never says whether the email has an
// account, nobody is added without accepting, and invitations expire after seven days.
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { invitationIn, lastMailTo, mailsTo } from '../helpers/outbox.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

const SITE = 'http://dashboard.example.test';
let svc: TestService;
beforeAll(async () => {
  // More people sign up here than the default per-address limit lets one address.
  svc = await startTestService({ SITE_URL: SITE, SIGNUP_MAX_PER_IP: '100' });
});
afterAll(() => svc?.stop());

const fn = (name: string) => `/functions/v1/${name}`;
const invite = (by: Session | string, email: string, role = 'member') =>
  call(svc, 'POST', fn('organization-members'), {
    token: typeof by === 'string' ? by : by.access_token,
    body: { email, role },
  });
const mine = (who: Session) => call(svc, 'GET', fn('invitations'), { token: who.access_token });
const answer = (who: Session, invitation_id: string, action: 'accept' | 'decline', token?: string) =>
  call(svc, 'POST', fn('invitations'), { token: who.access_token, body: { invitation_id, action, token } });
/** The token in the newest invitation mail to `email`. */
const tokenTo = async (email: string) => invitationIn(await lastMailTo(svc, email)).token;
const roster = async (owner: Session) =>
  (await call(svc, 'GET', fn('organization-members'), { token: owner.access_token })).json;
const DAY = 24 * 3600 * 1000;

describe('inviting', () => {
  it('answers the same for a registered and an unknown email, and mails both', async () => {
    const owner = await signUp(svc, 'Same Answer Co');
    const registered = await signUp(svc);
    const unknown = uniqueEmail('nobody');
    const a = await invite(owner, registered.user.email.toUpperCase());
    const b = await invite(owner, unknown);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(Object.keys(a.json).sort()).toEqual(Object.keys(b.json).sort());
    for (const [r, email] of [
      [a, registered.user.email],
      [b, unknown],
    ] as const) {
      expect(r.json).toMatchObject({
        email,
        role: 'member',
        organization_id: orgOf(owner),
        invited_by: owner.user.id,
        status: 'pending',
      });
      const expires = Date.parse(r.json.expires_at) - Date.now();
      expect(expires).toBeGreaterThan(7 * DAY - 60_000);
      expect(expires).toBeLessThanOrEqual(7 * DAY);
      const mail = await lastMailTo(svc, email);
      expect(mail.subject).toBe('You are invited to join Same Answer Co');
      expect(mail.text).toContain(owner.user.email);
      expect(invitationIn(mail)).toEqual({ invitation_id: r.json.id, token: expect.any(String) });
      expect(mail.link?.startsWith(`${SITE}/invitations#invitation_id=${r.json.id}&token=`)).toBe(true);
      expect(mail.text).toContain(mail.link);
    }
  });

  it('adds nobody until they accept: the invitee is not on the roster and cannot act in the organization', async () => {
    const owner = await signUp(svc, 'Consent Ltd');
    const person = await signUp(svc, 'Own Place');
    expect((await invite(owner, person.user.email)).status).toBe(201);
    const list = await roster(owner);
    expect(list.pagination.total).toBe(1);
    expect(list.invitations).toEqual([
      expect.objectContaining({ email: person.user.email, status: 'pending' }),
    ]);
    const sneak = await call(svc, 'POST', fn('organization-switch'), {
      token: person.access_token,
      body: { organization_id: orgOf(owner) },
    });
    expect(sneak.status).toBe(404);
  });

  it('refreshes a pending invitation instead of making a second one', async () => {
    const owner = await signUp(svc, 'Refresh Inc');
    const email = uniqueEmail();
    const first = await invite(owner, email, 'member');
    await svc.services.db.query(
      "update organization_invitations set expires_at = now() + interval '1 day' where id = $1",
      [first.json.id],
    );
    const second = await invite(owner, email, 'admin');
    expect(second.status).toBe(201);
    expect(second.json.id).toBe(first.json.id);
    expect(second.json.role).toBe('admin');
    expect(Date.parse(second.json.expires_at) - Date.now()).toBeGreaterThan(7 * DAY - 60_000);
    expect((await roster(owner)).invitations).toHaveLength(1);
    expect(await mailsTo(svc, email)).toHaveLength(2);
  });

  it('refuses an email already on the roster with already_member', async () => {
    const owner = await signUp(svc, 'Already Here');
    const r = await invite(owner, owner.user.email, 'admin');
    expect(r.status).toBe(409);
    expect(r.json.error).toBe('already_member');
    expect(await mailsTo(svc, owner.user.email)).toEqual([]);
  });

  it('lets only an owner invite an owner; members invite nobody; bad input is a validation_error', async () => {
    const owner = await signUp(svc, 'Roles Co');
    const admin = await inviteAndAccept(svc, owner, await signUp(svc), 'admin');
    const member = await inviteAndAccept(svc, owner, await signUp(svc), 'member');
    const byAdmin = await invite(admin, uniqueEmail(), 'owner');
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.json.error).toBe('forbidden');
    expect((await invite(admin, uniqueEmail(), 'admin')).status).toBe(201);
    expect((await invite(owner, uniqueEmail(), 'owner')).status).toBe(201);
    expect((await invite(member, uniqueEmail(), 'member')).status).toBe(403);
    for (const body of [
      { email: 'not-an-email', role: 'member' },
      { email: uniqueEmail(), role: 'boss' },
    ]) {
      const r = await call(svc, 'POST', fn('organization-members'), { token: owner.access_token, body });
      expect(r.status).toBe(400);
      expect(r.json.error).toBe('validation_error');
    }
  });
});

describe('answering', () => {
  it('lists invitations to the caller with organization, role, inviter and expiry; accepting makes them a member once', async () => {
    const owner = await signUp(svc, 'Welcome GmbH');
    const person = await signUp(svc);
    const invited = await invite(owner, person.user.email, 'admin');

    const list = await mine(person);
    expect(list.status).toBe(200);
    expect(list.json.pagination.total).toBe(1);
    expect(list.json.data).toEqual([
      {
        id: invited.json.id,
        organization_id: orgOf(owner),
        organization_name: 'Welcome GmbH',
        role: 'admin',
        invited_by_email: owner.user.email,
        expires_at: invited.json.expires_at,
        created_at: invited.json.created_at,
      },
    ]);

    const accepted = await answer(person, invited.json.id, 'accept', await tokenTo(person.user.email));
    expect(accepted.status).toBe(200);
    expect(accepted.json).toEqual({
      action: 'accept',
      organization: { id: orgOf(owner), name: 'Welcome GmbH' },
      role: 'admin',
    });
    const after = await roster(owner);
    expect(after.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ user_id: person.user.id, role: 'admin' })]),
    );
    expect(after.invitations).toEqual([]);
    expect((await mine(person)).json.data).toEqual([]);
    expect((await answer(person, invited.json.id, 'accept', await tokenTo(person.user.email))).status).toBe(
      404,
    );

    // A person who had no organization acts in the new one at their next refresh.
    const refreshed = await call(svc, 'POST', '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: person.refresh_token },
    });
    expect(orgOf(refreshed.json)).toBe(orgOf(owner));
  });

  it('declining removes the invitation and adds nobody', async () => {
    const owner = await signUp(svc, 'Declined Ltd');
    const person = await signUp(svc);
    const invited = await invite(owner, person.user.email);
    const declined = await answer(person, invited.json.id, 'decline', await tokenTo(person.user.email));
    expect(declined.status).toBe(200);
    expect(declined.json).toEqual({ action: 'decline' });
    const list = await roster(owner);
    expect(list.pagination.total).toBe(1);
    expect(list.invitations).toEqual([]);
    expect((await answer(person, invited.json.id, 'accept', await tokenTo(person.user.email))).status).toBe(
      404,
    );
  });

  it('shows and accepts nothing addressed to someone else', async () => {
    const owner = await signUp(svc, 'Private Invites');
    const addressee = uniqueEmail('addressee');
    const invited = await invite(owner, addressee);
    const other = await signUp(svc, 'Other Org');
    expect((await mine(other)).json.data).toEqual([]);
    // Even with the mail forwarded to them: the account's email must match too.
    const stolen = await answer(other, invited.json.id, 'accept', await tokenTo(addressee));
    expect(stolen.status).toBe(404);
    expect(stolen.json.error).toBe('not_found');
    expect((await answer(other, invited.json.id, 'decline', await tokenTo(addressee))).status).toBe(404);
    // The addressee signs up later with that email and finds it waiting.
    const later = await signUp(svc, undefined, addressee);
    expect((await mine(later)).json.data.map((i: { id: string }) => i.id)).toEqual([invited.json.id]);
    expect((await answer(later, invited.json.id, 'accept', await tokenTo(addressee))).status).toBe(200);
  });

  it('an account that registered the invited email first cannot accept or decline without the mail', async () => {
    const owner = await signUp(svc, 'Corp');
    const cfo = uniqueEmail('cfo');
    const invited = await invite(owner, cfo, 'owner');
    // Sign-up does not prove the address: the impostor holds an account with it and sees the invitation.
    const impostor = await signUp(svc, undefined, cfo);
    expect((await mine(impostor)).json.data.map((i: { id: string }) => i.id)).toEqual([invited.json.id]);
    const unknown = await answer(impostor, '00000000-0000-4000-8000-000000000000', 'accept', 'x');
    expect(unknown.status).toBe(404);
    for (const token of [undefined, '', 'guessed-token', (await tokenTo(cfo)).slice(0, -1)]) {
      for (const action of ['accept', 'decline'] as const) {
        const r = await answer(impostor, invited.json.id, action, token);
        // Exactly the answer for an invitation that does not exist: no oracle for the id.
        expect([r.status, r.json]).toEqual([unknown.status, unknown.json]);
      }
    }
    expect((await roster(owner)).data).toHaveLength(1);
    expect((await roster(owner)).invitations).toEqual([expect.objectContaining({ id: invited.json.id })]);
    // Whoever holds the mail (the real addressee, signed in with that email) answers.
    const accepted = await answer(impostor, invited.json.id, 'accept', await tokenTo(cfo));
    expect(accepted.status).toBe(200);
  });

  it('a refreshed invitation gets a new token: the link in the older mail no longer works', async () => {
    const owner = await signUp(svc, 'New Link Ltd');
    const person = await signUp(svc);
    const first = await invite(owner, person.user.email, 'member');
    const oldToken = await tokenTo(person.user.email);
    expect((await invite(owner, person.user.email, 'admin')).json.id).toBe(first.json.id);
    const newToken = await tokenTo(person.user.email);
    expect(newToken).not.toBe(oldToken);
    expect((await answer(person, first.json.id, 'accept', oldToken)).status).toBe(404);
    expect((await answer(person, first.json.id, 'decline', oldToken)).status).toBe(404);
    const accepted = await answer(person, first.json.id, 'accept', newToken);
    expect([accepted.status, accepted.json.role]).toEqual([200, 'admin']);
  });

  it("stores only the token's hash, which the inviter never sees", async () => {
    const owner = await signUp(svc, 'Hashed Only');
    const email = uniqueEmail();
    const invited = await invite(owner, email);
    const token = await tokenTo(email);
    const [row] = await svc.services.db.query<Record<string, unknown>>(
      'select * from organization_invitations where id = $1',
      [invited.json.id],
    );
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(invited.json)).not.toContain(token);
    expect(Object.keys(invited.json)).not.toContain('token_hash');
  });

  it('expired invitations are not offered and cannot be accepted; owners see them as expired', async () => {
    const owner = await signUp(svc, 'Slow Answer');
    const person = await signUp(svc);
    const invited = await invite(owner, person.user.email);
    await svc.services.db.query(
      "update organization_invitations set expires_at = now() - interval '1 second' where id = $1",
      [invited.json.id],
    );
    expect((await mine(person)).json.data).toEqual([]);
    expect((await answer(person, invited.json.id, 'accept', await tokenTo(person.user.email))).status).toBe(
      404,
    );
    expect((await roster(owner)).invitations).toEqual([
      expect.objectContaining({ id: invited.json.id, status: 'expired' }),
    ]);
    // Inviting again brings it back to life.
    expect((await invite(owner, person.user.email)).json).toMatchObject({
      id: invited.json.id,
      status: 'pending',
    });
    expect((await answer(person, invited.json.id, 'accept', await tokenTo(person.user.email))).status).toBe(
      200,
    );
  });

  it('a withdrawn invitation can no longer be accepted; another organization cannot withdraw it', async () => {
    const owner = await signUp(svc, 'Changed Mind');
    const person = await signUp(svc);
    const invited = await invite(owner, person.user.email);
    const stranger = await signUp(svc, 'Meddler');
    const meddle = await call(svc, 'DELETE', fn('organization-members'), {
      token: stranger.access_token,
      body: { invitation_id: invited.json.id },
    });
    expect(meddle.status).toBe(404);
    const withdrawn = await call(svc, 'DELETE', fn('organization-members'), {
      token: owner.access_token,
      body: { invitation_id: invited.json.id },
    });
    expect(withdrawn.status).toBe(204);
    expect((await mine(person)).json.data).toEqual([]);
    expect((await answer(person, invited.json.id, 'accept', await tokenTo(person.user.email))).status).toBe(
      404,
    );
    const again = await call(svc, 'DELETE', fn('organization-members'), {
      token: owner.access_token,
      body: { invitation_id: invited.json.id },
    });
    expect(again.status).toBe(404);
  });

  it('needs a signed-in person: no token 401, an agent 403, a malformed id 400', async () => {
    expect((await call(svc, 'GET', fn('invitations'))).status).toBe(401);
    const reg = await call(svc, 'POST', fn('agent-register'), {
      body: { agent_name: 'inv-bot', owner_email: uniqueEmail('bot'), organization_name: 'Bot Org' },
    });
    const ex = await call(svc, 'POST', fn('agent-auth'), { body: { api_key: reg.json.api_key } });
    const asAgent = await call(svc, 'GET', fn('invitations'), { token: ex.json.access_token });
    expect(asAgent.status).toBe(403);
    const person = await signUp(svc);
    const bad = await call(svc, 'POST', fn('invitations'), {
      token: person.access_token,
      body: { invitation_id: 'nope', action: 'accept' },
    });
    expect(bad.status).toBe(400);
  });
});

describe('over /rest/v1', () => {
  const rest = (who: Session) =>
    new PostgrestClient(`${svc.url}/rest/v1`, {
      headers: { apikey: svc.anonKey, Authorization: `Bearer ${who.access_token}` },
    });

  it('an owner cannot put anyone on the roster directly, and sees no other tenant’s invitations', async () => {
    const owner = await signUp(svc, 'Rest Shortcut');
    const victim = await signUp(svc);
    const direct = await rest(owner)
      .from('organization_members')
      .insert({ organization_id: orgOf(owner), user_id: victim.user.id, role: 'member' });
    expect(direct.status).toBe(403);
    expect((await roster(owner)).pagination.total).toBe(1);

    const other = await signUp(svc, 'Rest Neighbour');
    await invite(other, uniqueEmail());
    const { data, error } = await rest(owner).from('organization_invitations').select('id, email');
    expect(error).toBeNull();
    expect(data).toEqual([]);
    const mineOnly = await rest(other).from('organization_invitations').select('organization_id');
    expect(mineOnly.data).toEqual([{ organization_id: orgOf(other) }]);
  });

  const expiresIn = (days: number) => new Date(Date.now() + days * DAY).toISOString();
  const setExpiry = (who: Session | string, id: string, expires_at: string) =>
    new PostgrestClient(`${svc.url}/rest/v1`, {
      headers: {
        apikey: svc.anonKey,
        Authorization: `Bearer ${typeof who === 'string' ? who : who.access_token}`,
      },
    })
      .from('organization_invitations')
      .update({ expires_at })
      .eq('id', id)
      .select('expires_at, invited_by');

  it('owners and admins extend an invitation up to 30 days ahead; the invitee can accept until then', async () => {
    const owner = await signUp(svc, 'Late Starter Co');
    const admin = await inviteAndAccept(svc, owner, await signUp(svc), 'admin');
    const person = await signUp(svc);
    const invited = await invite(owner, person.user.email);
    const token = await tokenTo(person.user.email);

    const later = expiresIn(21);
    const extended = await setExpiry(owner, invited.json.id, later);
    expect(extended.error).toBeNull();
    expect(Date.parse(extended.data?.[0]?.expires_at)).toBe(Date.parse(later));
    // The invitee sees the new date; the owner's list too.
    expect((await mine(person)).json.data).toEqual([
      expect.objectContaining({ id: invited.json.id, expires_at: new Date(later).toISOString() }),
    ]);
    // A later change of role keeps the date the owner chose, rather than cutting it to seven days.
    const role = await rest(owner)
      .from('organization_invitations')
      .update({ role: 'admin' })
      .eq('id', invited.json.id)
      .select('expires_at');
    expect(Date.parse(role.data?.[0]?.expires_at)).toBe(Date.parse(later));

    // An expired invitation is brought back by an admin, and the mail already sent works again.
    await svc.services.db.query(
      "update organization_invitations set expires_at = now() - interval '1 second' where id = $1",
      [invited.json.id],
    );
    expect((await answer(person, invited.json.id, 'accept', token)).status).toBe(404);
    const revived = await setExpiry(admin, invited.json.id, expiresIn(2));
    expect(revived.error).toBeNull();
    expect((await roster(owner)).invitations).toEqual([
      expect.objectContaining({ id: invited.json.id, status: 'pending' }),
    ]);
    expect((await answer(person, invited.json.id, 'accept', token)).status).toBe(200);
  });

  it('refuses an expiry in the past, past 30 days or malformed, and changes nothing for a member or another organization', async () => {
    const owner = await signUp(svc, 'Firm Dates');
    const member = await inviteAndAccept(svc, owner, await signUp(svc), 'member');
    const invited = await invite(owner, uniqueEmail());
    const before = invited.json.expires_at;
    for (const when of [expiresIn(-1), expiresIn(31), 'next tuesday']) {
      const r = await setExpiry(owner, invited.json.id, when);
      expect(r.status).toBe(400);
      expect(r.data).toBeNull();
      if (when !== 'next tuesday') {
        expect(r.error?.message).toBe(
          "An invitation's expires_at must be in the future and at most 30 days from now",
        );
        expect(JSON.stringify(r.error)).not.toMatch(/organization_invitations|SQL|select/i);
      }
    }
    // A member may not manage invitations; another organization cannot see this one.
    expect((await setExpiry(member, invited.json.id, expiresIn(20))).data).toEqual([]);
    const stranger = await signUp(svc, 'Far Away Ltd');
    expect((await setExpiry(stranger, invited.json.id, expiresIn(20))).data).toEqual([]);
    // Nor is the inviter anyone's choice.
    const forged = await rest(owner)
      .from('organization_invitations')
      .update({ invited_by: stranger.user.id })
      .eq('id', invited.json.id);
    expect(forged.status).toBe(403);
    expect((await roster(owner)).invitations).toEqual([
      expect.objectContaining({ id: invited.json.id, expires_at: before, invited_by: owner.user.id }),
    ]);
  });
});

describe('the invitation limit', () => {
  let small: TestService;
  beforeAll(async () => {
    small = await startTestService({
      INVITES_PER_ORG_PER_HOUR: '2',
      INVITES_PER_USER_PER_HOUR: '3',
      INVITES_PER_EMAIL_PER_HOUR: '2',
    });
  });
  afterAll(() => small?.stop());

  it('refuses an organization’s invitations past INVITES_PER_ORG_PER_HOUR with 429, and mails nothing more', async () => {
    const owner = await signUp(small, 'Mass Mailer');
    const send = (email: string) =>
      call(small, 'POST', fn('organization-members'), {
        token: owner.access_token,
        body: { email, role: 'member' },
      });
    expect((await send(uniqueEmail())).status).toBe(201);
    expect((await send(uniqueEmail())).status).toBe(201);
    const third = uniqueEmail('third');
    const over = await send(third);
    expect(over.status).toBe(429);
    expect(over.json.error).toBe('rate_limit_exceeded');
    expect(over.headers.get('retry-after')).toBeTruthy();
    expect(await mailsTo(small, third)).toEqual([]);
    // Another organization has its own count.
    const other = await signUp(small, 'Quiet Co');
    const theirs = await call(small, 'POST', fn('organization-members'), {
      token: other.access_token,
      body: { email: uniqueEmail(), role: 'member' },
    });
    expect(theirs.status).toBe(201);
  });

  const sendAs = (who: Session | string, email: string) =>
    call(small, 'POST', fn('organization-members'), {
      token: typeof who === 'string' ? who : who.access_token,
      body: { email, role: 'member' },
    });
  const used = (limiter: 'invitesPerUser' | 'invitesPerOrg' | 'invitesPerEmail', key: string) =>
    small.services.limits[limiter].used(key);

  it('counts nothing for an invitation the caller may not send: a member cannot spend the owners’ budget', async () => {
    const owner = await signUp(small, 'Budget Keepers');
    const member = await signUp(small);
    const asMember = await inviteAndAccept(small, owner, member, 'member');
    expect(await used('invitesPerOrg', orgOf(owner))).toBe(1);
    for (let i = 0; i < 3; i++) expect((await sendAs(asMember, uniqueEmail())).status).toBe(403);
    // Nor does an address already on the roster (no mail goes out).
    expect((await sendAs(owner, member.user.email)).status).toBe(409);
    expect(await used('invitesPerOrg', orgOf(owner))).toBe(1);
    expect(await used('invitesPerUser', member.user.id)).toBe(0);
    expect(await used('invitesPerUser', owner.user.id)).toBe(1);
    expect((await sendAs(owner, uniqueEmail())).status).toBe(201);
  });

  it('limits one person across all their organizations with INVITES_PER_USER_PER_HOUR', async () => {
    const owner = await signUp(small, 'First Venture');
    expect((await sendAs(owner, uniqueEmail())).status).toBe(201);
    expect((await sendAs(owner, uniqueEmail())).status).toBe(201);
    // A fresh organization has a fresh organization budget, but the person's is nearly spent.
    const created = await call(small, 'POST', fn('organization-create'), {
      token: owner.access_token,
      body: { name: 'Second Venture' },
    });
    const switched = await call(small, 'POST', fn('organization-switch'), {
      token: owner.access_token,
      body: { organization_id: created.json.organization.id },
    });
    const second = switched.json.access_token as string;
    expect((await sendAs(second, uniqueEmail())).status).toBe(201);
    const last = uniqueEmail('fourth');
    const over = await sendAs(second, last);
    expect([over.status, over.json.error, over.json.message]).toEqual([
      429,
      'rate_limit_exceeded',
      expect.stringMatching(/^Too many invitations from you;/),
    ]);
    expect(await mailsTo(small, last)).toEqual([]);
    expect(await used('invitesPerUser', owner.user.id)).toBe(4);
    // The refusal came first: the organization's budget was not spent on it.
    expect(await used('invitesPerOrg', created.json.organization.id)).toBe(1);
  });

  it('limits mails to one address with INVITES_PER_EMAIL_PER_HOUR, re-sends and other organizations included', async () => {
    const owner = await signUp(small, 'Persistent Ltd');
    const victim = uniqueEmail('victim');
    expect((await sendAs(owner, victim)).status).toBe(201);
    expect((await sendAs(owner, victim)).status).toBe(201);
    // Another organization and another sender: still the same mailbox.
    const other = await signUp(small, 'Another Sender');
    const again = await sendAs(other, victim);
    expect([again.status, again.json.message]).toEqual([
      429,
      expect.stringMatching(/^Too many invitations to this email;/),
    ]);
    expect(await mailsTo(small, victim)).toHaveLength(2);
    expect(await used('invitesPerEmail', victim)).toBe(3);
    expect(await used('invitesPerOrg', orgOf(other))).toBe(1);
  });
});
