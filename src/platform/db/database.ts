// One interface over node-postgres and PGlite. Callers never see which engine runs underneath.
import { perObject } from '../per-object.ts';

export type Row = Record<string, unknown>;

export interface Queryable {
  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** A single connection that can also run a multi-statement script (migrations). */
export interface Connection extends Queryable {
  exec(script: string): Promise<void>;
}

/**
 * Who a request acts for. `claims` is the verified JWT payload; it becomes `request.jwt.claims`
 * inside the transaction so that row-level security sees exactly what PostgREST would give it.
 */
export type Principal =
  | { kind: 'user'; userId: string; claims: Record<string, unknown> }
  | { kind: 'agent'; keyId: string; claims: Record<string, unknown> }
  | { kind: 'anon'; claims: Record<string, unknown> }
  | { kind: 'service'; claims: Record<string, unknown> };

/** The organization a token names (people: app_metadata; agents: top level). */
export function claimedOrganization(principal: Principal): string | null {
  const c = principal.claims as { organization_id?: unknown; app_metadata?: { organization_id?: unknown } };
  const org = c.organization_id ?? c.app_metadata?.organization_id;
  return typeof org === 'string' ? org : null;
}

export interface Database {
  readonly engine: 'postgres' | 'pglite';
  /**
   * One statement outside any role switch: owner privileges. For internal machinery only.
   * `prepare`: on PostgreSQL, a named statement parsed and planned once per connection (as every
   * statement in a transaction is): for a statement run often, such as a webhook receipt's.
   */
  query<T extends Row = Row>(sql: string, params?: unknown[], opts?: { prepare?: boolean }): Promise<T[]>;
  /**
   * Statements without values, several in one text as the simple protocol runs them (the job
   * queue's `begin; …; commit` blocks), with owner privileges, outside any caller's transaction:
   * the rows of every statement, in order.
   */
  script<T extends Row = Row>(sql: string): Promise<T[]>;
  /** A transaction with owner privileges (auth internals, migrations, jobs). */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * A transaction as the caller: role `authenticated` (or `anon`) and the caller's claims set
   * transaction-locally, so every statement inside is subject to row-level security.
   */
  asPrincipal<T>(
    principal: Principal,
    fn: (tx: Queryable) => Promise<T>,
    opts?: { readOnly?: boolean },
  ): Promise<T>;
  /**
   * One statement as the caller, in a transaction of its own: the same as
   * `asPrincipal(principal, (tx) => tx.query(sql, params), opts)`, and cheaper: the claims
   * statement and this one go as one implicit transaction (no `begin` or `commit`; committed at
   * the Sync, or not at all). On PostgreSQL that is one socket write and one round trip
   * (one-sync.ts), on PGlite one call into the engine (pglite-one-sync.ts). For single-statement
   * requests: REST reads, and writes with nothing to check before the commit.
   */
  queryAs<T extends Row = Row>(
    principal: Principal,
    sql: string,
    params?: unknown[],
    opts?: { readOnly?: boolean },
  ): Promise<T[]>;
  /** Runs fn on one connection holding a cluster-wide advisory lock (migrations). */
  withAdvisoryLock<T>(key: string, fn: (conn: Connection) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` on every NOTIFY of `channel` (other processes' migrations), with its payload;
   * without one when notices may have been missed (a LISTEN connection back after a loss, or none
   * behind a transaction pooler: pg-pooled.ts). Returns a stop.
   */
  listen(channel: string, onNotify: (payload?: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /** How the connections are used now, for metrics; absent on PGlite (one engine, no pool). */
  stats?(): PoolStats;
  /**
   * The embedded engine only: its whole data directory as a tar (PGlite's `dumpDataDir`), taken
   * between transactions after a checkpoint, so it opens without replaying anything
   * (`svc backup`, src/cli/backup.ts). PostgreSQL has pg_dump instead (docs/operations.md).
   */
  dumpDataDir?(): Promise<Blob>;
}

/** The pool's connections and waiting callers, and the shared read lanes' (read-lanes.ts). */
export type PoolStats = {
  pool: { max: number; open: number; idle: number; waiting: number };
  lanes: { max: number; open: number; inFlight: number };
};

/** The role and claims a principal runs under, as PostgREST derives them from the JWT. */
export function roleOf(principal: Principal): 'authenticated' | 'anon' | 'service_role' {
  if (principal.kind === 'service') return 'service_role';
  return principal.kind === 'anon' ? 'anon' : 'authenticated';
}

// One statement, as PostgREST sends it, plus the check of the claims against the database: the
// context function of the lookup the claims name (migrations/0038), inlined by the planner, whose
// settings the same projection sets. Transaction-local, so a pooled connection never keeps any of
// it. The lookup is a scan in FROM, so it runs (as the connection's owner) before the projection
// switches the role.
// The settings are made inside a subquery whose outputs nobody reads: set_config is volatile, so
// PostgreSQL still evaluates every one of them, but the row sent back is one integer instead of
// ten texts (the claims JSON among them), which both processes would write and read for nothing.
// What PostgREST sets from a token, in every claims statement.
const POSTGREST_SETTINGS = `set_config('role', $1, true), set_config('request.jwt.claims', $2, true),
  set_config('request.jwt.claim.sub', $3, true), set_config('transaction_read_only', $4, true)`;
const claimsSql = (context: string) =>
  `select 1 as claims from (select ${POSTGREST_SETTINGS},
  set_config('svc.org_id', c.org_id, true), set_config('svc.org_role', c.org_role, true),
  set_config('svc.agent_scopes', c.agent_scopes, true), set_config('svc.can_read', c.can_read, true),
  set_config('svc.can_write', c.can_write, true), set_config('svc.can_delete', c.can_delete, true)
  from ${context} c) settings`;

/** The claims statement of each kind of caller, each prepared once per connection by its name. */
export const CLAIMS_STATEMENTS = {
  member: { name: 'svc_claims_member', text: claimsSql('app.member_context($5, $6)') },
  agent: { name: 'svc_claims_agent', text: claimsSql('app.agent_context($5, $6, $7)') },
  none: { name: 'svc_claims_none', text: claimsSql('app.no_context()') },
  // Claims whose ids are not UUIDs in canonical form: app.establish_context parses them as
  // before and refuses a malformed one (22P02) while the statement runs. A bound uuid value would
  // be refused at Bind instead, before the statement's result begins, and one-sync.ts relies on
  // the claims statement never failing that early (its record of which Parses ran).
  checked: {
    name: 'svc_claims_checked',
    text: `select ${POSTGREST_SETTINGS}, app.establish_context($2::jsonb)`,
  },
} as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** null, or a UUID in the form every engine reads (anything else goes the checked way). */
const wellFormed = (id: string | null) => id === null || UUID.test(id);

// A token's claims JSON, written once per token (per-object.ts).
const claimsJson = perObject((claims: object) => JSON.stringify(claims));

/** What `->>` gives for a claim: null when absent or JSON null, a string's text, else its JSON. */
const claimText = (v: unknown): string | null =>
  v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v);
const nonEmpty = (v: unknown) => {
  const t = claimText(v);
  return t === '' ? null : t;
};

/**
 * Which lookup the claims name, and its arguments: the choice app.establish_context makes from
 * the claims JSON (migrations/0038), made here from the token so that the statement touches only
 * that lookup's tables. test/rls/claims-context.test.ts holds the two to the same settings.
 */
function contextOf(claims: Record<string, unknown>): {
  kind: keyof typeof CLAIMS_STATEMENTS;
  args: unknown[];
} {
  if (claims.role !== 'authenticated') return { kind: 'none', args: [] };
  const sub = nonEmpty(claims.sub);
  if (claims.org_role === 'agent') {
    const org = nonEmpty(claims.organization_id);
    if (!wellFormed(sub) || !wellFormed(org)) return { kind: 'checked', args: [] };
    const scopes = Array.isArray(claims.agent_scopes) ? claims.agent_scopes.map(claimText) : null;
    return { kind: 'agent', args: [sub, org, scopes] };
  }
  const meta = claims.app_metadata;
  const m =
    meta !== null && typeof meta === 'object' && !Array.isArray(meta)
      ? (meta as Record<string, unknown>)
      : {};
  const org = nonEmpty(m.organization_id) ?? nonEmpty(m.org_id);
  if (!wellFormed(sub) || !wellFormed(org)) return { kind: 'checked', args: [] };
  return { kind: 'member', args: [sub, org] };
}

/** The claims statement of a transaction as `principal`: its name, text and values. */
export function claimsStatement(principal: Principal, readOnly = false) {
  const { claims } = principal;
  const sub = typeof claims.sub === 'string' ? claims.sub : '';
  const { kind, args } = contextOf(claims);
  const values = [roleOf(principal), claimsJson(claims), sub, readOnly ? 'on' : 'off', ...args];
  return { ...CLAIMS_STATEMENTS[kind], values };
}

/**
 * `make(principal, readOnly)` kept per principal and mode (per-object.ts): what an engine derives
 * from a token's claims statement is the same on every request the token makes, and a request's
 * principal is one per token (principalFromClaims).
 */
export function perClaims<T>(make: (principal: Principal, readOnly: boolean) => T) {
  const readWrite = perObject((principal: Principal) => make(principal, false));
  const readOnly = perObject((principal: Principal) => make(principal, true));
  return (principal: Principal, ro = false): T => (ro ? readOnly : readWrite)(principal);
}

export const SERVICE: Principal = { kind: 'service', claims: { role: 'service_role' } };
