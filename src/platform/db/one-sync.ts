import { createRequire } from 'node:module';
import pg from 'pg';

/**
 * Two statements as one implicit transaction: a Parse for each the connection has not parsed yet,
 * then Bind, Describe and Execute for each, and a single Sync, all in one socket write. PostgreSQL
 * runs everything before a Sync as one transaction, so the claims statement's transaction-local
 * settings (`set_config(…, true)`) hold for the second statement and are gone at the Sync: no
 * `begin`, no `commit`, two statements executed instead of four, one round trip.
 *
 * node-postgres cannot say this with its own queries (each ends with a Sync, and its pipeline
 * tells results apart by ReadyForQuery), so this is a Query of its own: a subclass, so that a
 * pipelining connection accepts it, whose results arrive as the two results of one query.
 * It keeps node-postgres's record of parsed statement names exact, including after a failure.
 */
type Statement = { name: string; text: string; values: unknown[] | undefined };
type Connection = {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  stream: { cork(): void; uncork(): void };
  parse(m: { text: string; name: string }): void;
  bind(m: { statement: string; values: unknown[]; valueMapper: unknown }): void;
  describe(m: { type: 'P'; name: string }): void;
  execute(m: Record<string, never>): void;
  sync(): void;
};

const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: unknown };

// What this file uses of node-postgres's Query, which its type declarations do not describe.
type QueryInternals = {
  callback?: (err: Error | null, res?: unknown) => void;
  submit(connection: unknown): Error | null;
  handleReadyForQuery(con: unknown): void;
  handleRowDescription(msg: unknown): void;
  handleError(err: Error, con: unknown): void;
};
const Query = pg.Query as unknown as new (
  text: string,
) => QueryInternals & {
  name: string;
  values: unknown[] | undefined;
};

/** Bind, Describe and Execute of one parsed statement, its rows into the unnamed portal. */
function run(c: Connection, statement: string, values: unknown[] | undefined) {
  c.bind({ statement, values: values ?? [], valueMapper: prepareValue });
  c.describe({ type: 'P', name: '' });
  c.execute({});
}

export class OneSync extends Query {
  /** The named statements this submission sent a Parse for. */
  private readonly parsedHere: Statement[] = [];
  private conn: Connection | undefined;
  /** A result has begun, so every Parse of the batch (they come first) has run. */
  private described = false;

  constructor(protected readonly statements: [Statement, Statement]) {
    // The text alone, then the rest: a config object node-postgres copies property descriptor by
    // descriptor (Object.defineProperties), ~3 % of the service's CPU on a by-id read.
    super(statements[1].text);
    this.name = statements[1].name;
    this.values = statements[1].values;
  }

  override submit(connection: unknown): Error | null {
    const c = connection as Connection;
    this.conn = c;
    c.stream.cork();
    try {
      // Every Parse first: a named statement exists once its Parse has run, whatever happens to
      // the transaction after it, and a batch sent behind this one on a shared connection
      // (read-lanes.ts) relies on it without a Parse of its own. Were the claims statement run
      // before the read's Parse, a caller the claims refuse would leave that batch without it.
      for (const s of this.statements) {
        const known = s.name !== '' && (c.parsedStatements[s.name] ?? c.submittedNamedStatements[s.name]);
        if (known) continue;
        c.parse({ text: s.text, name: s.name });
        if (s.name !== '') {
          c.submittedNamedStatements[s.name] = s.text;
          this.parsedHere.push(s);
        }
      }
      for (const s of this.statements) run(c, s.name, s.values);
      c.sync();
    } finally {
      c.stream.uncork();
    }
    return null;
  }

  // node-postgres records a ParseComplete under this query's own name only: on success, every
  // statement this batch parsed is now known to the server.
  override handleReadyForQuery(con: unknown): void {
    if (this.conn && !(this as unknown as { _canceledDueToError: unknown })._canceledDueToError) {
      for (const s of this.statements) if (s.name !== '') this.known(s.name, s.text);
    }
    super.handleReadyForQuery(con);
  }

  override handleRowDescription(msg: unknown): void {
    this.described = true;
    super.handleRowDescription(msg);
  }

  // After a failure, which of its Parses ran is known exactly, and recorded before anything else
  // is sent: a later batch must neither skip a Parse that failed nor repeat one that ran (a
  // DEALLOCATE to be safe would race batches already sent that rely on the name). A result had
  // begun: all ran. None had: the read's Parse failed (the claims statement is the same valid
  // text every time, and nothing else of it can fail before its result begins).
  override handleError(err: Error, con: unknown): void {
    for (const s of this.parsedHere) {
      if (this.described || s === this.statements[0]) this.known(s.name, s.text);
      else if (this.conn) {
        delete this.conn.parsedStatements[s.name];
        delete this.conn.submittedNamedStatements[s.name];
      }
    }
    super.handleError(err, con);
  }

  private known(name: string, text: string) {
    if (!this.conn) return;
    this.conn.parsedStatements[name] = text;
    delete this.conn.submittedNamedStatements[name];
  }
}

/**
 * The same batch for a transaction-mode pooler (pg-pooled.ts), where every statement is unnamed:
 * a Parse of the unnamed statement replaces the one before it, so each Parse is followed by its
 * own Bind, Describe and Execute before the next. Still one Sync: one implicit transaction that a
 * pooler keeps on one server connection, and one round trip. Nothing is recorded as parsed.
 */
export class UnnamedOneSync extends OneSync {
  override submit(connection: unknown): Error | null {
    const c = connection as Connection;
    c.stream.cork();
    try {
      for (const s of this.statements) {
        c.parse({ text: s.text, name: '' });
        run(c, '', s.values);
      }
      c.sync();
    } finally {
      c.stream.uncork();
    }
    return null;
  }
}

/** Runs `q` on `client`; resolves with its per-statement results. */
export function runOneSync(client: pg.ClientBase, q: OneSync): Promise<pg.QueryResult[]> {
  return new Promise((resolve, reject) => {
    q.callback = (err: Error | null, res?: unknown) =>
      err ? reject(err) : resolve(Array.isArray(res) ? res : [res as pg.QueryResult]);
    client.query(q as unknown as pg.QueryConfig);
  });
}
