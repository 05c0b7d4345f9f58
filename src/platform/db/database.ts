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
  /** One statement outside any role switch: owner privileges. For internal machinery only. */
  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<T[]>;
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
  /** Calls `onNotify` on every NOTIFY of `channel` (other processes' migrations); returns a stop. */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The role and claims a principal runs under, as PostgREST derives them from the JWT. */
export function roleOf(principal: Principal): 'authenticated' | 'anon' | 'service_role' {
  if (principal.kind === 'service') return 'service_role';
  return principal.kind === 'anon' ? 'anon' : 'authenticated';
}

// One statement, as PostgREST sends it, plus the check of the claims against the database
// (app.establish_context). Transaction-local, so a pooled connection never keeps any of it.
export const SET_CLAIMS_SQL = `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true),
  set_config('request.jwt.claim.sub', $3, true), set_config('transaction_read_only', $4, true),
  app.establish_context($2::jsonb)`;

// A token's claims JSON, written once per token (per-object.ts).
const claimsJson = perObject((claims: object) => JSON.stringify(claims));

export function claimsParams(principal: Principal, readOnly = false): unknown[] {
  const { claims } = principal;
  const sub = typeof claims.sub === 'string' ? claims.sub : '';
  return [roleOf(principal), claimsJson(claims), sub, readOnly ? 'on' : 'off'];
}

/** The claims statement of a transaction as `principal`, with its values. */
export const claimsStatement = (principal: Principal, readOnly = false) => ({
  text: SET_CLAIMS_SQL,
  values: claimsParams(principal, readOnly),
});

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
