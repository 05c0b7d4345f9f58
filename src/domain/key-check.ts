import type { Database } from '../platform/db/database.ts';

/**
 * Whether an agent token's key is still active and unexpired, for the MCP endpoint, which answers
 * some calls (tools/list) without a database statement that would find the key revoked
 * (row-level security checks it on every statement: app.establish_context).
 *
 * An answer is remembered for `ttlMs` at most (AGENT_KEY_RECHECK_SECONDS, 5 s), and forgotten at
 * once when the database announces a revocation on KEY_REVOKED_CHANNEL (migrations/0034): every
 * process listens (main.ts), so a key revoked through any of them is refused everywhere
 * immediately; the short memory bounds the wait when a notice is lost (a LISTEN connection being
 * re-opened, a pooler that drops notifications).
 */
export const KEY_REVOKED_CHANNEL = 'svc_agent_key_revoked';

export type KeyCheck = {
  isLive(keyId: string, organizationId: string): Promise<boolean>;
  /** Forgets every answer (a key somewhere was revoked; the notice does not say whose). */
  forgetAll(): void;
};

export function createKeyCheck(db: Database, ttlMs: number): KeyCheck {
  const known = new Map<string, { ok: boolean; until: number }>();
  // A check that began before a revocation's notice may read the key as live and land after the
  // notice: it must not be remembered, or the notice would be undone for ttlMs.
  let generation = 0;
  return {
    async isLive(keyId, organizationId) {
      const cacheKey = `${keyId}:${organizationId}`;
      const hit = known.get(cacheKey);
      if (hit && hit.until > Date.now()) return hit.ok;
      const asked = generation;
      const [row] = await db.query(
        `select 1 from public.agent_api_keys
          where id = $1::uuid and organization_id = $2::uuid and is_active and expires_at > now()`,
        [keyId, organizationId],
      );
      if (asked === generation) {
        if (known.size > 10_000) known.clear();
        known.set(cacheKey, { ok: Boolean(row), until: Date.now() + ttlMs });
      }
      return Boolean(row);
    },
    forgetAll() {
      generation++;
      known.clear();
    },
  };
}
