import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Named prepared statements for node-postgres, per connection. An unnamed statement is parsed and
 * planned on every execution; for a primary-key read under row-level security that planning cost
 * 3–4× the execution (docs/performance.md). A statement named by a hash of its text is parsed once
 * per connection, and PostgreSQL keeps its plan: custom plans for the first five runs, then the
 * generic plan when its estimated cost is no worse (`plan_cache_mode = auto`, left at its default:
 * the policies' `(select app.current_org_id())` is an InitPlan either way, so generic plans of
 * these shapes keep the index scans; measured in docs/performance.md).
 *
 * Each connection keeps at most `max` statements, least recently used evicted first, so a client
 * that sends an endless variety of SQL shapes (REST filters, selects) cannot grow either process
 * without bound. Only statements with bound values are prepared: a statement without any may be
 * a multi-statement script, which the extended protocol refuses.
 */
export const MAX_STATEMENTS_PER_CONNECTION = 200;

type Prepared = { name: string; text: string; values: unknown[] };

// node-postgres remembers what it parsed on the connection; an evicted name must be forgotten
// there too, or the next use would skip its Parse and fail with "does not exist".
type Internals = { connection: { parsedStatements: Record<string, string> } };

// Per connection, each statement's name and when it was last used. Recency is a stamp on the
// entry, not the Map's order: moving a hit to the end (delete, then set) on every query is the
// pattern that, in the in-flight Set of server-lifecycle.ts, kept recent garbage alive through the
// young generation's collections (docs/performance.md, "What the garbage collector does with the
// service's garbage"); here it was changed with it, not measured on its own.
type Entry = { name: string; used: number };
const caches = new WeakMap<pg.ClientBase, Map<string, Entry>>();
let clock = 0;

/** A statement's name on a connection: a hash of its text (pglite-one-sync.ts names them alike). */
export const nameOf = (text: string) => `s_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;

/** The query config for `text`: named (prepared once on this connection) when it has values. */
export function prepared(
  client: pg.ClientBase,
  text: string,
  values: unknown[] | undefined,
  max = MAX_STATEMENTS_PER_CONNECTION,
): Prepared | { text: string; values: unknown[] | undefined } {
  if (!values || values.length === 0) return { text, values };
  let cache = caches.get(client);
  if (!cache) {
    cache = new Map();
    caches.set(client, cache);
  }
  const hit = cache.get(text);
  if (hit !== undefined) {
    hit.used = ++clock;
    return { name: hit.name, text, values };
  }
  if (cache.size >= max) {
    // The least recently used goes: a scan, only when a new statement arrives at a full cache.
    let oldest: [string, Entry] | undefined;
    for (const entry of cache) if (!oldest || entry[1].used < oldest[1].used) oldest = entry;
    if (oldest) forget(client, oldest[0], oldest[1].name);
  }
  const name = nameOf(text);
  cache.set(text, { name, used: ++clock });
  return { name, text, values };
}

/**
 * Drops a statement from the connection. The DEALLOCATE is queued on the pipelining connection
 * without waiting: it runs before anything sent after it. Should it fail (sent inside a
 * transaction a swallowed error had aborted), the server keeps the name while the driver forgot
 * it; the next Parse of that name then fails with 42P05, and forgetOnError drops it for good.
 */
function forget(client: pg.ClientBase, text: string, name: string, onServer = false) {
  caches.get(client)?.delete(text);
  const parsed = (client as unknown as Internals).connection.parsedStatements;
  if (parsed[name] === undefined && !onServer) return;
  delete parsed[name];
  client.query(`deallocate "${name}"`).catch(() => {});
}

/**
 * After a failed transaction has been rolled back (call it once the rollback is queued, so the
 * DEALLOCATE runs outside the aborted transaction), forgets a statement whose server-side copy no
 * longer fits: a migration changed the columns a `select *` returns (0A000 "cached plan must not
 * change result type"), the statement is gone (26000), or the server still holds a name the
 * driver forgot (42P05). The failing request still fails; the next one parses afresh.
 */
export function forgetOnError(client: pg.ClientBase, err: unknown, text: string) {
  const code = (err as { code?: string }).code;
  if (code !== '0A000' && code !== '26000' && code !== '42P05') return;
  const name = caches.get(client)?.get(text)?.name ?? nameOf(text);
  forget(client, text, name, code === '42P05');
}
