// Each change is read under the subscriber's own claims (src/realtime/changes.ts), not the
// service's: a person whose membership ended without the notice reaching this process (a lost
// LISTEN connection) is sent nothing, neither the row nor a delete, while a member is sent both.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { principalFromClaims } from '../../src/platform/http/authenticate.ts';
import { type Change, readFor, type Subscription } from '../../src/realtime/changes.ts';
import { call, inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Claims Shop');
});
afterAll(async () => {
  await svc?.stop();
});

const principalOf = async (token: string) => principalFromClaims(await svc.services.tokens.verify(token));
const subs: Subscription[] = [{ id: 1, event: '*', table: 'contacts', filter: null }];

it('a change reaches a member, and nothing of it one whose membership ended', async () => {
  const person = await signUp(svc);
  const token = await inviteAndAccept(svc, owner, person, 'member');
  const made = await call(svc, 'POST', '/rest/v1/contacts', {
    token: owner.access_token,
    body: { first_name: 'Kept' },
    headers: { prefer: 'return=representation' },
  });
  const id = made.json[0].id as string;
  const rel = svc.services.schema.get('contacts');
  if (!rel) throw new Error('contacts is served');
  const change = (op: Change['op']): Change => ({
    table: 'contacts',
    op,
    org: orgOf(owner),
    id,
    at: new Date().toISOString(),
  });

  const member = await principalOf(token);
  expect((await readFor(svc.services.db, member, rel, change('INSERT'), subs)).row).toMatchObject({
    id,
    first_name: 'Kept',
  });
  expect((await readFor(svc.services.db, member, rel, change('DELETE'), subs)).reached).toEqual(subs);

  await svc.services.db.query(
    'delete from organization_members where user_id = $1 and organization_id = $2',
    [person.user.id, orgOf(owner)],
  );
  expect(await readFor(svc.services.db, member, rel, change('INSERT'), subs)).toEqual({
    row: null,
    reached: [],
  });
  expect(await readFor(svc.services.db, member, rel, change('DELETE'), subs)).toEqual({
    row: null,
    reached: [],
  });
  const stillOwner = await principalOf(owner.access_token);
  expect((await readFor(svc.services.db, stillOwner, rel, change('UPDATE'), subs)).reached).toEqual(subs);
});
