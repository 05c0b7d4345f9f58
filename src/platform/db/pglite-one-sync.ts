import { createRequire } from 'node:module';
import { type PGlite, protocol, types } from '@electric-sql/pglite';
import type { Row } from './database.ts';
import { MAX_STATEMENTS_PER_CONNECTION, nameOf } from './statement-cache.ts';

/**
 * Statements on PGlite, each batch one call into the engine: Parse (once per named statement),
 * Bind, Describe and Execute for each statement, then a single Sync, as one protocol buffer.
 * PGlite's own `query()` makes six calls into the WASM engine per statement (parse, describe,
 * bind, describe, execute, sync) and its `transaction()` two more for BEGIN and two for COMMIT.
 *
 * `runOneSync`: statements as one implicit transaction, sixteen calls for the claims and one read
 * becoming one. PostgreSQL runs everything before a Sync as one transaction, so the claims'
 * transaction-local settings hold for the statements after them and are gone at the Sync, and a
 * failure rolls all of it back (the same shape as one-sync.ts on a server). `runTransaction`: an
 * explicit transaction, one call for `begin` and the claims and one per statement after them.
 *
 * Values are sent as text, written by node-postgres's own rules (arrays as array literals,
 * objects as JSON, dates with their offset), so both engines bind a value alike, and the
 * server infers each parameter's type as it does for PGlite's `query()`. Rows are read with
 * PGlite's parsers, as its `query()` reads them.
 */
export type Statement = {
  text: string;
  values: unknown[];
  /** The statement's Bind message (bindOf), for a caller that sends the same values again and again. */
  bind?: Uint8Array;
};

const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (v: unknown) => unknown;
};
const { serialize } = protocol;

function asText(value: unknown): string | null {
  const v = prepareValue(value);
  if (v === null || v === undefined) return null;
  return v instanceof Uint8Array ? `\\x${Buffer.from(v).toString('hex')}` : String(v);
}

// What this file reads of PGlite's messages, which its declarations type loosely.
type Message =
  | { name: 'rowDescription'; fields: { name: string; dataTypeID: number }[] }
  | { name: 'dataRow'; fields: (string | null)[] }
  | { name: 'commandComplete'; text: string }
  | { name: string };

/**
 * Runs `statements` as one implicit transaction; resolves with each one's rows, or rejects with
 * the database's error (nothing of the batch then stays). It holds PGlite's transaction and query
 * locks for the call, as `describeQuery()` does: otherwise it could run between two statements of
 * someone's open transaction and become part of it.
 */
export function runOneSync(
  db: PGlite,
  statements: Statement[],
  opts: { readOnly?: boolean } = {},
): Promise<Row[][]> {
  return db._runExclusiveTransaction(async () => {
    const { rows } = await send(db, statements);
    // Written data reaches the data directory as after any of PGlite's own statements.
    if (!opts.readOnly) await db.syncToFs();
    return rows;
  });
}

/**
 * An explicit transaction as PGlite's `transaction()` runs one, each statement a single call
 * into the engine (Parse only the first time, Bind, Describe, Execute, Sync) where `query()`
 * makes six: `begin` and `prelude` (the claims) go together, then each of `fn`'s statements,
 * then `commit`, or `rollback` when `fn` throws. It holds the transaction lock throughout, so no
 * other caller's statement runs inside it.
 */
export function runTransaction<T>(
  db: PGlite,
  prelude: Statement | null,
  fn: (query: (text: string, values?: unknown[]) => Promise<Row[]>) => Promise<T>,
): Promise<T> {
  return db._runExclusiveTransaction(async () => {
    let result: T;
    try {
      // A failure in the same batch as `begin` leaves the block open and failed: rolled back below.
      await send(db, [{ text: 'begin', values: [] }, ...(prelude ? [prelude] : [])]);
      result = await fn(async (text, values = []) => (await send(db, [{ text, values }])).rows[0] ?? []);
    } catch (err) {
      await send(db, [{ text: 'rollback', values: [] }]);
      throw err;
    }
    const { tags } = await send(db, [{ text: 'commit', values: [] }]);
    // A transaction that failed inside and was carried on anyway ends in ROLLBACK, not COMMIT.
    if (tags[0] === 'ROLLBACK') throw new TransactionRolledBack();
    await db.syncToFs();
    return result;
  });
}

/** A commit that rolled back: a statement of the transaction had failed and was not undone. */
export class TransactionRolledBack extends Error {
  readonly code = '25P02';
  constructor() {
    super('The transaction was rolled back: one of its statements had failed');
  }
}

/**
 * The Bind message of a statement with values, as `send` writes it: for a caller that keeps it
 * and passes it along with the statement each time (the same text and values, so the same bytes).
 */
export const bindOf = (s: Statement): Uint8Array =>
  serialize.bind({ statement: nameOf(s.text), values: s.values.map(asText) });

/** One protocol buffer: `statements` and a Sync, under PGlite's query lock. */
function send(db: PGlite, statements: Statement[]): Promise<{ rows: Row[][]; tags: string[] }> {
  const cache = statementsOf(db);
  return db._runExclusiveQuery(async () => {
    // Built under the lock: what the cache believes the engine holds changes one batch at a time.
    // Closes lead the batch, where nothing before them can fail and skip them.
    const closes: Uint8Array[] = cache.closing();
    const parts: Uint8Array[] = [];
    const parsedHere: string[] = [];
    const used: string[] = [];
    for (const s of statements) {
      // Only a statement with values is named, as on a server (statement-cache.ts).
      const name = s.values.length ? cache.prepare(s.text, closes, parts, parsedHere) : '';
      if (name) used.push(s.text);
      else parts.push(serialize.parse({ text: s.text }));
      parts.push(
        s.bind && name ? s.bind : serialize.bind({ statement: name, values: s.values.map(asText) }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
      );
    }
    parts.push(serialize.sync());
    let messages: Message[];
    try {
      const batch = Buffer.concat([...closes, ...parts]);
      messages = (await db.execProtocolStream(batch, { syncToFs: false })) as Message[];
    } catch (err) {
      cache.failed(err, parsedHere, used);
      throw err;
    }
    return resultsOf(messages, db.parsers);
  });
}

function resultsOf(messages: Message[], parsers: typeof types.parsers): { rows: Row[][]; tags: string[] } {
  const results: Row[][] = [];
  const tags: string[] = [];
  let fields: { name: string; dataTypeID: number }[] = [];
  let rows: Row[] = [];
  for (const m of messages) {
    if (m.name === 'rowDescription') fields = (m as Extract<Message, { name: 'rowDescription' }>).fields;
    else if (m.name === 'dataRow') {
      const values = (m as Extract<Message, { name: 'dataRow' }>).fields;
      const row: Row = {};
      fields.forEach((f, i) => {
        row[f.name] = types.parseType(values[i] ?? null, f.dataTypeID, parsers);
      });
      rows.push(row);
    } else if (m.name === 'commandComplete') {
      results.push(rows);
      tags.push((m as Extract<Message, { name: 'commandComplete' }>).text);
      rows = [];
      fields = [];
    }
  }
  return { rows: results, tags };
}

/**
 * Named statements on one PGlite database, as statement-cache.ts keeps them on a server
 * connection: a statement with values is parsed once under a name taken from its text, so it is
 * not planned again on every request (PGlite's `query()` parses and plans every time); at most
 * MAX_STATEMENTS_PER_CONNECTION, the least recently used closed first.
 *
 * A batch that fails may have stopped before or after a Parse it carried, and a statement whose
 * result type changed under it (0A000, after a migration) or that is gone (26000) must be parsed
 * afresh: such names are forgotten and closed at the start of the next batch (closing a statement
 * that does not exist is no error), so the engine never holds one the cache does not know.
 */
class Statements {
  private readonly names = new Map<string, string>(); // text → name, least recently used first
  private readonly toClose = new Set<string>();

  /**
   * The name to bind `text` to: adds the Parse it needs to `parts` (noted in `parsedHere`) and
   * the Close of a statement evicted to make room to `closes`.
   */
  prepare(text: string, closes: Uint8Array[], parts: Uint8Array[], parsedHere: string[]): string {
    const known = this.names.get(text);
    if (known !== undefined) {
      this.names.delete(text);
      this.names.set(text, known);
      return known;
    }
    if (this.names.size >= MAX_STATEMENTS_PER_CONNECTION) {
      const [oldest, name] = this.names.entries().next().value as [string, string];
      this.names.delete(oldest);
      closes.push(serialize.close({ type: 'S', name }));
    }
    const name = nameOf(text);
    parts.push(serialize.parse({ text, name }));
    this.names.set(text, name);
    parsedHere.push(text);
    return name;
  }

  /** Close messages for the names a failed batch left unsure. */
  closing(): Uint8Array[] {
    const parts = [...this.toClose].map((name) => serialize.close({ type: 'S', name }));
    this.toClose.clear();
    return parts;
  }

  /** After a failed batch: which of its names may not be what the engine holds. */
  failed(err: unknown, parsedHere: string[], used: string[]): void {
    const code = (err as { code?: string }).code;
    const stale = code === '0A000' || code === '26000' || code === '42P05';
    for (const text of stale ? used : parsedHere) {
      const name = this.names.get(text);
      if (name === undefined) continue;
      this.names.delete(text);
      this.toClose.add(name);
    }
  }
}

const caches = new WeakMap<PGlite, Statements>();

function statementsOf(db: PGlite): Statements {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Statements();
    caches.set(db, cache);
  }
  return cache;
}
