// Every tenant table can be distributed by organization_id (Citus) when one PostgreSQL is outgrown
// (shared/DESIGN.md, principle 3; the plan: docs/operations.md, "Distributing by organization").
// Read from the catalog of the migrated database, on both engines, so a migration that breaks the
// rule fails here:
// * every table of the app's schemas is either distributed by organization_id or named in
//   EXCEPTIONS with where it goes (a reference table copied to every node, or local to the
//   coordinator) and why;
// * a distributed table has organization_id not null and in its primary key and in every unique
//   constraint and unique index (Citus enforces uniqueness only within a shard), and each foreign
//   key to another distributed table joins organization_id to the target's organization_id (the
//   rows sit on the same node) and sets nothing null or default on delete (Citus refuses that
//   there); its other foreign keys point at reference tables;
// * a reference table refers to reference tables only, and no table outside the distributed
//   ones refers into them (Citus accepts neither).
// A known gap is named in EXCEPTIONS too, by constraint, with a TODO saying what closes it.
// The queue's `pgboss` schema is pg-boss's own and not a migration's: docs/operations.md says
// where it goes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';

const SCHEMAS = ['public', 'app', 'auth', 'extensions', 'svc_meta'];

type Exception =
  | { table: string; placement: 'distributed by id' | 'reference' | 'local'; reason: string }
  | { constraint: string; reason: string };

const SET_NULL =
  'TODO: Citus refuses ON DELETE SET NULL between distributed tables when the key includes the distribution column, even set null (column) (citusdata/citus#7132): no action and a trigger on the parent that nulls the column';

/** Keep the same list in docs/operations.md ("Distributing by organization"). */
const EXCEPTIONS: Exception[] = [
  {
    table: 'public.organizations',
    placement: 'distributed by id',
    reason: 'the tenant itself: its id is every other table’s organization_id, so its row sits with them',
  },
  { table: 'public.plans', placement: 'reference', reason: 'the plan catalogue, read by every tenant' },
  {
    table: 'app.order_transitions',
    placement: 'reference',
    reason: 'the order state machine, the same for every tenant',
  },
  {
    table: 'app.social_post_transitions',
    placement: 'reference',
    reason: 'the social post state machine, the same for every tenant',
  },
  {
    table: 'auth.users',
    placement: 'reference',
    reason: 'a person belongs to several organizations; tenant rows name them (members, authors)',
  },
  { table: 'auth.sessions', placement: 'local', reason: 'the identity provider’s own, per person' },
  { table: 'auth.refresh_tokens', placement: 'local', reason: 'the identity provider’s own, per person' },
  { table: 'auth.one_time_tokens', placement: 'local', reason: 'the identity provider’s own, per person' },
  {
    table: 'app.webhook_deliveries',
    placement: 'local',
    reason:
      'the raw inbox: one delivery may carry several tenants’ entries, routed by the worker from app.webhook_inbox',
  },
  {
    table: 'app.webhook_inbox',
    placement: 'local',
    reason: 'receipts not yet routed: a delivery’s tenants are known only once the router has read it',
  },
  {
    table: 'app.stripe_events',
    placement: 'local',
    reason: 'Stripe event ids seen, for idempotency; a tenant is known only after reading one',
  },
  { table: 'svc_meta.migrations', placement: 'local', reason: 'the migrator’s record' },
  {
    table: 'app.oauth_clients',
    placement: 'local',
    reason:
      'the authorization server’s own (MCP sign-in): a client is no tenant’s, one may be granted into several',
  },
  {
    table: 'app.oauth_codes',
    placement: 'local',
    reason:
      'the authorization server’s own, like auth.*: a code is found by its hash before its organization is known',
  },
  {
    table: 'app.oauth_refresh_tokens',
    placement: 'local',
    reason:
      'the authorization server’s own, like auth.refresh_tokens: found by hash before the organization is known',
  },
  {
    table: 'public.agent_auth_attempts',
    placement: 'local',
    reason:
      'an attempt with an unknown key has no organization (organization_id null), so it cannot be distributed by it',
  },
  {
    constraint: 'public.agent_auth_attempts.agent_auth_attempts_organization_id_fkey',
    reason:
      'TODO: a local table cannot refer to a distributed one; on Citus drop it (the retention purge already deletes old attempts) or distribute the table by key_prefix',
  },
  {
    constraint: 'public.agent_api_keys.agent_api_keys_key_prefix_key',
    reason:
      'TODO: agent-auth finds a key by its prefix before it knows the organization; on Citus a lookup table distributed by key_prefix must hold the prefix → organization',
  },
  {
    constraint: 'app.billing_accounts.billing_accounts_customer_id_key',
    reason:
      'TODO: Stripe’s webhooks name the customer, not the organization: read metadata.organization_id (billing-sessions.ts sets it) or keep a lookup table by customer_id',
  },
  {
    constraint: 'app.billing_accounts.billing_accounts_subscription_id_key',
    reason:
      'TODO: as customer_id: Stripe’s subscription events find the organization by it (metadata has it too)',
  },
  {
    constraint: 'app.connect_states.connect_states_state_hash_key',
    reason:
      'TODO: a provider’s sign-in callback brings back only the state; the organization must travel in the state itself (or a lookup table distributed by state_hash hold it)',
  },
  {
    constraint: 'public.orders.orders_organization_id_contact_id_fkey',
    reason: `${SET_NULL} (a contact deleted, its orders lose the link)`,
  },
  {
    constraint: 'public.order_items.order_items_organization_id_item_id_fkey',
    reason: `${SET_NULL} (an item deleted, its order lines lose the link)`,
  },
  {
    constraint: 'public.messages.messages_organization_id_sent_by_agent_key_id_fkey',
    reason: `${SET_NULL} (a key deleted, its messages lose the author)`,
  },
  {
    constraint: 'public.conversations.conversations_organization_id_assignee_user_id_fkey',
    reason: `${SET_NULL} (a member removed, their conversations lose the assignee)`,
  },
  {
    constraint: 'app.webhook_events.webhook_events_delivery_fkey',
    reason:
      'TODO: points at the local inbox (app.webhook_deliveries); on Citus drop it, and the retention purge deletes a delivery’s events itself',
  },
  {
    constraint: 'app.webhook_events.webhook_events_provider_delivery_id_account_id_key',
    reason:
      'TODO: drop in the release after migration 0043 (which added the same with organization_id): the previous release’s receipts name it in ON CONFLICT',
  },
];

const tableExceptions = new Map(EXCEPTIONS.flatMap((e) => ('table' in e ? [[e.table, e] as const] : [])));
const constraintExceptions = new Set(EXCEPTIONS.flatMap((e) => ('constraint' in e ? [e.constraint] : [])));

type Table = { name: string; org: { notnull: boolean } | null };
type Key = { table: string; name: string; kind: 'p' | 'u' | 'f' | 'x' | 'i'; columns: string[] };
/** onDelete: pg_constraint.confdeltype (`n` set null, `d` set default, `c` cascade, …). */
type ForeignKey = Key & { target: string; targetColumns: string[]; onDelete: string };

type Catalog = { tables: Table[]; keys: Key[]; foreignKeys: ForeignKey[] };

/** The app's tables with their keys, unique indexes and foreign keys (column names in key order). */
async function readCatalog(fresh: FreshDatabase): Promise<Catalog> {
  const q = <T>(sql: string) => fresh.db.query(sql, [SCHEMAS]) as Promise<T[]>;
  const tables = await q<{ name: string; notnull: boolean | null }>(`
    select format('%s.%s', n.nspname, c.relname) as name, a.attnotnull as notnull
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      left join pg_attribute a on a.attrelid = c.oid and a.attname = 'organization_id' and not a.attisdropped
     where c.relkind in ('r', 'p') and not c.relispartition and n.nspname = any($1::text[])`);
  // Constraints (primary, unique, exclusion, foreign) and unique indexes no constraint owns;
  // an expression in an index is named '(expression)'.
  const keys = await q<
    Key & { target: string | null; target_columns: string[] | null; on_delete: string | null }
  >(`
    select format('%s.%s', n.nspname, c.relname) as table, k.conname as name, k.contype::text as kind,
           array(select a.attname::text from unnest(k.conkey) with ordinality u(num, i)
                   join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.num order by u.i) as columns,
           case when k.contype = 'f' then format('%s.%s', tn.nspname, t.relname) end as target,
           case when k.contype = 'f' then array(select a.attname::text from unnest(k.confkey) with ordinality u(num, i)
                   join pg_attribute a on a.attrelid = k.confrelid and a.attnum = u.num order by u.i) end as target_columns,
           case when k.contype = 'f' then k.confdeltype::text end as on_delete
      from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
      left join pg_class t on t.oid = k.confrelid left join pg_namespace tn on tn.oid = t.relnamespace
     where k.contype in ('p', 'u', 'f', 'x') and n.nspname = any($1::text[])
    union all
    select format('%s.%s', n.nspname, c.relname), ic.relname, 'i',
           array(select coalesce(a.attname::text, '(expression)') from unnest(i.indkey::int2[]) with ordinality u(num, i)
                   left join pg_attribute a on a.attrelid = i.indrelid and a.attnum = u.num order by u.i),
           null, null, null
      from pg_index i join pg_class c on c.oid = i.indrelid join pg_class ic on ic.oid = i.indexrelid
      join pg_namespace n on n.oid = c.relnamespace
     where i.indisunique and n.nspname = any($1::text[])
       and not exists (select from pg_constraint k where k.conindid = i.indexrelid and k.conrelid = i.indrelid)`);
  return {
    tables: tables.map((t) => ({ name: t.name, org: t.notnull === null ? null : { notnull: t.notnull } })),
    keys: keys.filter((k) => k.kind !== 'f'),
    foreignKeys: keys
      .filter((k) => k.kind === 'f')
      .map((k) => ({
        ...k,
        target: k.target as string,
        targetColumns: k.target_columns as string[],
        onDelete: k.on_delete as string,
      })),
  };
}

/** The column a table is distributed by, or null when it is not distributed. */
function distributionColumn(table: Table): string | null {
  const exception = tableExceptions.get(table.name);
  if (exception) return exception.placement === 'distributed by id' ? 'id' : null;
  return table.org ? 'organization_id' : null;
}

/** Every way the catalog breaks the rules above, as sentences; known gaps left out. */
function violations(catalog: Catalog): string[] {
  const found: string[] = [];
  const byName = new Map(catalog.tables.map((t) => [t.name, t]));
  const column = (name: string) => {
    const t = byName.get(name);
    return t ? distributionColumn(t) : null;
  };
  const placement = (name: string) =>
    column(name) ? 'distributed' : (tableExceptions.get(name)?.placement ?? 'unplaced');
  const known = (k: Key) => constraintExceptions.has(`${k.table}.${k.name}`);

  for (const t of catalog.tables) {
    if (!distributionColumn(t) && !tableExceptions.has(t.name))
      found.push(`${t.name} has no organization_id and is not named in EXCEPTIONS`);
    if (distributionColumn(t) === 'organization_id' && !t.org?.notnull)
      found.push(`${t.name}.organization_id may be null`);
  }
  for (const k of catalog.keys) {
    const dist = column(k.table);
    if (!dist || known(k)) continue;
    if (!k.columns.includes(dist)) {
      const what = k.kind === 'p' ? 'primary key' : k.kind === 'i' ? 'unique index' : 'unique constraint';
      found.push(`${k.table}: ${what} ${k.name} (${k.columns.join(', ')}) lacks ${dist}`);
    }
  }
  for (const fk of catalog.foreignKeys) {
    if (known(fk)) continue;
    const from = placement(fk.table);
    const to = placement(fk.target);
    const what = `${fk.table}: foreign key ${fk.name} (${fk.columns.join(', ')}) → ${fk.target}`;
    if (from === 'distributed' && to === 'distributed') {
      const at = fk.columns.indexOf(column(fk.table) as string);
      if (at < 0 || fk.targetColumns[at] !== column(fk.target))
        found.push(
          `${what} (${fk.targetColumns.join(', ')}) does not join ${column(fk.table)} to ${column(fk.target)}`,
        );
      else if (fk.onDelete === 'n' || fk.onDelete === 'd')
        found.push(
          `${what}: on delete set null or set default, which Citus refuses between distributed tables`,
        );
    } else if (from === 'distributed' && to !== 'reference') {
      found.push(
        `${what}: a distributed table may refer only to distributed and reference tables, not ${to}`,
      );
    } else if (from === 'reference' && to !== 'reference') {
      found.push(`${what}: a reference table may refer only to reference tables, not ${to}`);
    } else if (from === 'local' && to === 'distributed') {
      found.push(`${what}: a local table may not refer to a distributed one`);
    }
  }
  return found;
}

let fresh: FreshDatabase;
let catalog: Catalog;
beforeAll(async () => {
  fresh = await freshDatabase();
  catalog = await readCatalog(fresh);
});
afterAll(() => fresh?.drop());

describe('every tenant table can be distributed by organization_id', () => {
  it('reads the tables the migrations make (so the checks below check something)', () => {
    const names = catalog.tables.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['public.contacts', 'public.orders', 'app.webhook_events']));
    expect(catalog.keys.some((k) => k.kind === 'i' && k.name === 'contacts_email_key')).toBe(true);
    expect(catalog.foreignKeys.some((k) => k.name === 'order_items_organization_id_order_id_fkey')).toBe(
      true,
    );
  });

  it('no primary key, unique key or foreign key breaks the rule, apart from the named gaps', () => {
    expect(violations(catalog)).toEqual([]);
  });

  it('every exception names a table or constraint that exists (a stale entry would hide nothing)', () => {
    const tables = new Set(catalog.tables.map((t) => t.name));
    const constraints = new Set([...catalog.keys, ...catalog.foreignKeys].map((k) => `${k.table}.${k.name}`));
    const stale = EXCEPTIONS.filter((e) =>
      'table' in e ? !tables.has(e.table) : !constraints.has(e.constraint),
    );
    expect(stale).toEqual([]);
  });

  it('a unique constraint without organization_id, a foreign key across tenants or one that sets null, and an unnamed global table are caught', () => {
    const contacts: Key = {
      table: 'public.contacts',
      name: 'contacts_phone_key',
      kind: 'u',
      columns: ['phone'],
    };
    const acrossTenants: ForeignKey = {
      table: 'public.orders',
      name: 'orders_contact_fkey',
      kind: 'f',
      columns: ['contact_id'],
      target: 'public.contacts',
      targetColumns: ['id'],
      onDelete: 'a',
    };
    const nulling: ForeignKey = {
      ...acrossTenants,
      name: 'orders_nulling_fkey',
      columns: ['organization_id', 'contact_id'],
      targetColumns: ['organization_id', 'id'],
      onDelete: 'n',
    };
    const newGlobal: Table = { name: 'public.feature_flags', org: null };
    const broken = {
      tables: [...catalog.tables, newGlobal],
      keys: [...catalog.keys, contacts],
      foreignKeys: [...catalog.foreignKeys, acrossTenants, nulling],
    };
    expect(violations(broken)).toEqual([
      'public.feature_flags has no organization_id and is not named in EXCEPTIONS',
      'public.contacts: unique constraint contacts_phone_key (phone) lacks organization_id',
      'public.orders: foreign key orders_contact_fkey (contact_id) → public.contacts (id) does not join organization_id to organization_id',
      'public.orders: foreign key orders_nulling_fkey (organization_id, contact_id) → public.contacts: on delete set null or set default, which Citus refuses between distributed tables',
    ]);
  });
});
