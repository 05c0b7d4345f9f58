import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnect, takeConnect } from '../../src/domain/connect-state.ts';
import { principalOf } from '../../src/platform/http/authenticate.ts';
import { inviteAndAccept, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// The state of a provider sign-in (src/domain/connect-state.ts) is what stops a stranger from
// finishing someone else's sign-in, or a sign-in from connecting into another organization: it
// works once, for the person who started it, in the organization they started it in.

let svc: TestService;
let owner: Session;
let stranger: Session;
const as = (token: string) => principalOf(svc.services, `Bearer ${token}`, true);

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'State Shop');
  stranger = await signUp(svc, 'Stranger Shop');
});
afterAll(() => svc.stop());

describe('a connect state', () => {
  it('gives back its sealed data once, to the person who started it', async () => {
    const state = await startConnect(svc.services, await as(owner.access_token), 'facebook', {
      token: 'EAAG-x',
    });
    const [row] = await svc.services.db.query<{ data_encrypted: string }>(
      'select data_encrypted from app.connect_states order by created_at desc limit 1',
    );
    expect(row?.data_encrypted).not.toContain('EAAG-x');
    expect(await takeConnect(svc.services, await as(owner.access_token), 'facebook', state)).toEqual({
      token: 'EAAG-x',
    });
    await expect(
      takeConnect(svc.services, await as(owner.access_token), 'facebook', state),
    ).rejects.toMatchObject({
      status: 400,
      code: 'invalid_state',
    });
  });

  it('is refused to another person, and spent by the attempt', async () => {
    const state = await startConnect(svc.services, await as(owner.access_token), 'shopify', {
      shop: 'a.myshopify.com',
    });
    await expect(
      takeConnect(svc.services, await as(stranger.access_token), 'shopify', state),
    ).rejects.toMatchObject({
      code: 'invalid_state',
    });
    await expect(
      takeConnect(svc.services, await as(owner.access_token), 'shopify', state),
    ).rejects.toMatchObject({
      code: 'invalid_state',
    });
  });

  it('is refused for another provider, and after it expires', async () => {
    const p = await as(owner.access_token);
    const other = await startConnect(svc.services, p, 'instagram');
    await expect(takeConnect(svc.services, p, 'facebook', other)).rejects.toMatchObject({
      code: 'invalid_state',
    });

    const late = await startConnect(svc.services, p, 'instagram');
    await svc.services.db.query(`update app.connect_states set expires_at = now() - interval '1 second'`);
    await expect(takeConnect(svc.services, p, 'instagram', late)).rejects.toMatchObject({
      code: 'invalid_state',
    });
  });

  it('can be started only by an owner or admin', async () => {
    const member = await signUp(svc);
    const token = await inviteAndAccept(svc, owner, member, 'member');
    await expect(startConnect(svc.services, await as(token), 'facebook')).rejects.toMatchObject({
      status: 403,
      code: 'forbidden',
    });
  });
});
