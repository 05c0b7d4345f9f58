// The agent scope order (admin implies write, write implies read) exists in two languages:
// SCOPES in src/domain/agent-keys.ts gates tools and functions, app.scope_order() in
// migrations/0013_lean_claims.sql gates rows. This file fails when the two disagree, on the
// order itself and on every decision derived from it, for every set of scopes a token can carry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, tokenCovers } from '../../src/domain/agent-keys.ts';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { agentPrincipal, as, seedAgent, seedTenant } from './fixtures.ts';

let fresh: FreshDatabase;
let orgId: string;
let keyId: string;
beforeAll(async () => {
  fresh = await freshDatabase();
  orgId = (await seedTenant(fresh.db, 'scope-order')).orgId;
  keyId = (await seedAgent(fresh.db, orgId, [...SCOPES])).keyId;
});
afterAll(() => fresh?.drop());

/** Every subset of SCOPES, the empty one included. */
const subsets = SCOPES.reduce<string[][]>((all, s) => all.concat(all.map((x) => [...x, s])), [[]]);

describe('the agent scope order', () => {
  it('is the same list, lowest first, in SQL and in TypeScript', async () => {
    const [row] = await fresh.db.query<{ order: string[] }>('select app.scope_order() as "order"');
    expect(row?.order).toEqual([...SCOPES]);
  });

  it.each(subsets.map((s) => [s.join(',') || '(none)', s] as const))(
    'a token with scopes %s is let through by the database exactly where the TypeScript gate lets it',
    async (_label, scopes) => {
      const agent = agentPrincipal(keyId, orgId, scopes);
      const [row] = await as<{ covers: boolean[]; r: boolean; w: boolean; d: boolean }>(
        fresh.db,
        agent,
        `select array(select app.has_scope(x) from unnest($1::text[]) with ordinality u(x, n) order by n) as covers,
                app.can_read() as r, app.can_write() as w, app.can_delete() as d`,
        [[...SCOPES]],
      );
      const expected = SCOPES.map((required) => tokenCovers(agent, required));
      expect(row?.covers).toEqual(expected);
      // The per-request decisions the policies read follow the same order.
      expect([row?.r, row?.w, row?.d]).toEqual(expected);
    },
  );

  it('a name that is not a scope grants nothing', async () => {
    const agent = agentPrincipal(keyId, orgId, [...SCOPES]);
    const [row] = await as<{ ok: boolean }>(fresh.db, agent, "select app.has_scope('superuser') as ok");
    expect(row?.ok).toBe(false);
  });
});
