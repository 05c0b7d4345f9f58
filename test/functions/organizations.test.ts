import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, inviteAndAccept, orgOf, signIn, signUp } from '../helpers/http.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.stop());

const fn = (name: string) => `/functions/v1/${name}`;

describe('organization-create', () => {
  it('creates a free organization owned by the caller, without switching to it', async () => {
    const me = await signUp(svc, 'First Co');
    const r = await call(svc, 'POST', fn('organization-create'), {
      token: me.access_token,
      body: { name: '  Second Co ' },
    });
    expect(r.status).toBe(201);
    expect(r.json.organization).toMatchObject({ name: 'Second Co', plan: 'free' });
    expect(r.json.role).toBe('owner');
    const refreshed = await call(svc, 'POST', '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: me.refresh_token },
    });
    expect(orgOf(refreshed.json)).toBe(orgOf(me));
  });

  it('needs a signed-in person: no token, the anon key, a bad token and a blank name are refused', async () => {
    expect((await call(svc, 'POST', fn('organization-create'), { body: { name: 'X' } })).status).toBe(401);
    const anon = await call(svc, 'POST', fn('organization-create'), {
      token: svc.anonKey,
      body: { name: 'X' },
    });
    expect(anon.status).toBe(401);
    const bad = await call(svc, 'POST', fn('organization-create'), { token: 'a.b.c', body: { name: 'X' } });
    expect(bad.status).toBe(401);
    expect(bad.json.error).toBe('unauthorized');
    const me = await signUp(svc);
    const blank = await call(svc, 'POST', fn('organization-create'), {
      token: me.access_token,
      body: { name: ' ' },
    });
    expect(blank.status).toBe(400);
    expect(blank.json.error).toBe('validation_error');
    expect(blank.json.details.issues[0].path).toBe('name');
  });

  it('refuses an expired token with token_expired', async () => {
    const me = await signUp(svc);
    const claims = decodeJwt(me.access_token);
    const expired = await svc.services.tokens.sign({ ...claims, exp: undefined, iat: undefined }, -10);
    const r = await call(svc, 'POST', fn('organization-create'), { token: expired, body: { name: 'Late' } });
    expect(r.status).toBe(401);
    expect(r.json.error).toBe('token_expired');
  });
});

describe('organization-switch', () => {
  it('returns a session acting in the other organization, and refuses one the caller is not in', async () => {
    const me = await signUp(svc, 'Home');
    const other = await call(svc, 'POST', fn('organization-create'), {
      token: me.access_token,
      body: { name: 'Away' },
    });
    const target = other.json.organization.id;
    const r = await call(svc, 'POST', fn('organization-switch'), {
      token: me.access_token,
      body: { organization_id: target },
    });
    expect(r.status).toBe(200);
    expect(r.json.refresh_token).toBeTruthy();
    expect(orgOf(r.json)).toBe(target);
    expect(decodeJwt(r.json.access_token).app_metadata).toMatchObject({ org_role: 'owner', org_id: target });
    // Later sign-ins keep the choice.
    expect(orgOf(await signIn(svc, me.user.email))).toBe(target);

    const stranger = await signUp(svc, 'Stranger Inc');
    const refused = await call(svc, 'POST', fn('organization-switch'), {
      token: stranger.access_token,
      body: { organization_id: target },
    });
    expect(refused.status).toBe(404);
    expect(refused.json.error).toBe('not_found');
    const malformed = await call(svc, 'POST', fn('organization-switch'), {
      token: stranger.access_token,
      body: { organization_id: 'nope' },
    });
    expect(malformed.status).toBe(400);
  });
});

describe('organization-switch and sessions', () => {
  it('ends the calling session, and refuses a token whose session was logged out', async () => {
    const me = await signUp(svc, 'Switch Home');
    const away = await call(svc, 'POST', fn('organization-create'), {
      token: me.access_token,
      body: { name: 'Away' },
    });
    const switched = await call(svc, 'POST', fn('organization-switch'), {
      token: me.access_token,
      body: { organization_id: away.json.organization.id },
    });
    expect(switched.status).toBe(200);
    // The old session's refresh token died with it.
    const oldRefresh = await call(svc, 'POST', '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: me.refresh_token },
    });
    expect(oldRefresh.status).toBe(400);
    // A logged-out token cannot mint a new session here.
    const again = await call(svc, 'POST', fn('organization-switch'), {
      token: me.access_token,
      body: { organization_id: orgOf(me) },
    });
    expect(again.status).toBe(401);
    await call(svc, 'POST', '/auth/v1/logout?scope=local', { token: switched.json.access_token });
    const afterLogout = await call(svc, 'POST', fn('organization-switch'), {
      token: switched.json.access_token,
      body: { organization_id: orgOf(me) },
    });
    expect(afterLogout.status).toBe(401);
  });
});

describe('organization-members', () => {
  it('lists members with the list envelope, removes them, and keeps the last owner', async () => {
    const owner = await signUp(svc, 'Roster Ltd');
    const alice = await signUp(svc);
    const bob = await signUp(svc);
    const aliceIn = await inviteAndAccept(svc, owner, alice, 'admin');
    const asBob = await inviteAndAccept(svc, owner, bob, 'member');

    const page1 = await call(svc, 'GET', `${fn('organization-members')}?per_page=2`, {
      token: owner.access_token,
    });
    expect(page1.status).toBe(200);
    expect(page1.json.pagination).toEqual({ page: 1, per_page: 2, total: 3, total_pages: 2 });
    expect(page1.json.data.map((m: { role: string }) => m.role)).toEqual(['owner', 'admin']);
    expect(page1.json.data[1]).toMatchObject({ user_id: alice.user.id, email: alice.user.email });
    expect(page1.json.invitations).toEqual([]);
    const page2 = await call(svc, 'GET', `${fn('organization-members')}?per_page=2&page=2`, {
      token: owner.access_token,
    });
    expect(page2.json.data).toEqual([
      expect.objectContaining({ user_id: bob.user.id, email: bob.user.email }),
    ]);

    // Bob is a member: he may look but not manage, and sees no invitations.
    const asMember = await call(svc, 'GET', fn('organization-members'), { token: asBob });
    expect(asMember.json.pagination.total).toBe(3);
    expect(asMember.json).not.toHaveProperty('invitations');
    const bobInvites = await call(svc, 'POST', fn('organization-members'), {
      token: asBob,
      body: { email: uniqueEmail(), role: 'member' },
    });
    expect(bobInvites.status).toBe(403);
    const bobRemoves = await call(svc, 'DELETE', fn('organization-members'), {
      token: asBob,
      body: { user_id: alice.user.id },
    });
    expect(bobRemoves.status).toBe(403);

    // Alice (admin) may not remove the owner; nobody may remove the last owner.
    const aliceRemovesOwner = await call(svc, 'DELETE', fn('organization-members'), {
      token: aliceIn,
      body: { user_id: owner.user.id },
    });
    expect(aliceRemovesOwner.status).toBe(403);
    const lastOwner = await call(svc, 'DELETE', fn('organization-members'), {
      token: owner.access_token,
      body: { user_id: owner.user.id },
    });
    expect(lastOwner.status).toBe(409);
    expect(lastOwner.json.error).toBe('last_owner');

    const removed = await call(svc, 'DELETE', fn('organization-members'), {
      token: aliceIn,
      body: { user_id: bob.user.id },
    });
    expect(removed.status).toBe(204);
    // Bob's token still names the organization, but membership is checked on every request.
    const bobAfter = await call(svc, 'GET', fn('organization-members'), { token: asBob });
    expect(bobAfter.status).toBe(403);
    const gone = await call(svc, 'DELETE', fn('organization-members'), {
      token: owner.access_token,
      body: { user_id: bob.user.id },
    });
    expect(gone.status).toBe(404);
  });

  it('changes roles: owners and admins, only owners touch owners, never the last owner, not across tenants', async () => {
    const owner = await signUp(svc, 'Roles Co');
    const admin = await signUp(svc);
    const member = await signUp(svc);
    const adminToken = await inviteAndAccept(svc, owner, admin, 'admin');
    const memberToken = await inviteAndAccept(svc, owner, member, 'member');
    const patch = (token: string, user_id: string, role: string) =>
      call(svc, 'PATCH', fn('organization-members'), { token, body: { user_id, role } });
    const roleOf = async (userId: string) =>
      (
        await svc.services.db.query<{ role: string }>(
          'select role from organization_members where organization_id = $1 and user_id = $2',
          [orgOf(owner), userId],
        )
      )[0]?.role;

    const promoted = await patch(adminToken, member.user.id, 'admin');
    expect(promoted.status).toBe(200);
    expect(promoted.json).toMatchObject({ user_id: member.user.id, email: member.user.email, role: 'admin' });
    // The new role is read at the member's next request, from the roster, not their token.
    const invited = await call(svc, 'POST', fn('organization-members'), {
      token: memberToken,
      body: { email: uniqueEmail('by-new-admin'), role: 'member' },
    });
    expect(invited.status).toBe(201);

    const byAdmin = await patch(adminToken, member.user.id, 'owner');
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.json.message).toMatch(/Only an owner may make someone an owner/);
    expect(await roleOf(member.user.id)).toBe('admin');
    expect((await patch(memberToken, admin.user.id, 'member')).status).toBe(200);
    expect((await patch(adminToken, member.user.id, 'member')).status).toBe(403); // no longer an admin
    expect((await patch(owner.access_token, owner.user.id, 'admin')).json.error).toBe('last_owner');
    expect(await roleOf(owner.user.id)).toBe('owner');

    const stranger = await signUp(svc, 'Elsewhere');
    expect((await patch(stranger.access_token, member.user.id, 'member')).status).toBe(404);
    expect(await roleOf(member.user.id)).toBe('admin');
    expect((await patch(owner.access_token, member.user.id, 'boss')).status).toBe(400);
  });

  it('refuses callers with no organization and a DELETE naming neither or both ids', async () => {
    const owner = await signUp(svc, 'Lonely LLC');
    for (const body of [{}, { user_id: owner.user.id, invitation_id: owner.user.id }]) {
      const r = await call(svc, 'DELETE', fn('organization-members'), { token: owner.access_token, body });
      expect(r.status).toBe(400);
      expect(r.json.error).toBe('validation_error');
    }
    const homeless = await signUp(svc);
    const list = await call(svc, 'GET', fn('organization-members'), { token: homeless.access_token });
    expect(list.status).toBe(403);
    expect(list.json.error).toBe('no_organization');
  });
});

describe('organization-plan', () => {
  it('refuses every person, owners included: a ceiling anyone can lift is none', async () => {
    const owner = await signUp(svc, 'Owner Plan Co');
    const org = orgOf(owner);
    const admin = await inviteAndAccept(svc, owner, await signUp(svc), 'admin');
    const member = await inviteAndAccept(svc, owner, await signUp(svc), 'member');
    const stranger = await signUp(svc, 'Elsewhere Co');
    for (const token of [owner.access_token, admin, member, stranger.access_token, svc.anonKey]) {
      const refused = await call(svc, 'POST', fn('organization-plan'), {
        token,
        body: { organization_id: org, plan: 'scale' },
      });
      expect(refused.status).toBe(403);
      expect(refused.json.error).toBe('forbidden');
    }
    const usage = await call(svc, 'GET', fn('agent-usage'), { token: owner.access_token });
    expect(usage.json.plan.slug).toBe('free');
  });

  it('without billing configured, says so and whom to ask', async () => {
    const owner = await signUp(svc, 'Self Hosted Co');
    for (const name of ['billing-checkout', 'billing-portal']) {
      const r = await call(svc, 'POST', fn(name), { token: owner.access_token, body: { plan: 'starter' } });
      expect(r.status).toBe(409);
      expect(r.json.error).toBe('billing_not_configured');
      expect(r.json.message).toMatch(/operator/);
    }
    const billing = await call(svc, 'GET', fn('billing'), { token: owner.access_token });
    expect(billing.status).toBe(200);
    expect(billing.json).toMatchObject({ plan: 'free', billing_enabled: false, subscription: null });
    expect(billing.json.message).toMatch(/^Plans are changed by whoever runs this service/);
    expect(billing.json.plans.find((p: { slug: string }) => p.slug === 'starter')).toMatchObject({
      price_usd: 99,
      additional_agent_usd: 10,
      agents_included: 3,
    });
    // The receiver does not exist without billing.
    const hook = await call(svc, 'POST', fn('stripe-webhook'), { body: { id: 'evt_1' } });
    expect(hook.status).toBe(404);
  });

  it('lets the service role change any plan', async () => {
    const owner = await signUp(svc, 'Upgrade Corp');
    const org = orgOf(owner);

    const r = await call(svc, 'POST', fn('organization-plan'), {
      token: svc.serviceRoleKey,
      body: { organization_id: org, plan: 'growth' },
    });
    expect(r.status).toBe(200);
    expect(r.json.organization).toMatchObject({ id: org, plan: 'growth' });
    expect(r.json.plan_limits).toEqual({
      contacts: 5000,
      orders: null,
      inventory_items: 3000,
      outbound_messages: 5000,
      api_calls_per_day: 25000,
      warehouses: 5,
      ai_annotations: 1000,
      agents: 5,
      mcp_scopes: ['read', 'write', 'admin'],
      data_retention_days: 730,
    });

    const unknownPlan = await call(svc, 'POST', fn('organization-plan'), {
      token: svc.serviceRoleKey,
      body: { organization_id: org, plan: 'platinum' },
    });
    expect(unknownPlan.status).toBe(400);
    const unknownOrg = await call(svc, 'POST', fn('organization-plan'), {
      token: svc.serviceRoleKey,
      body: { organization_id: '00000000-0000-4000-8000-000000000000', plan: 'starter' },
    });
    expect(unknownOrg.status).toBe(404);
  });
});
