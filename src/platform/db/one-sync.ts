import { createRequire } from 'node:module';
import pg from 'pg';

/**
 * Two statements as one implicit transaction: Parse (when the connection has not parsed it yet),
 * Bind, Describe and Execute for each, then a single Sync, all in one socket write. PostgreSQL
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
};
const Query = pg.Query as unknown as new (config: {
  text: string;
  name: string;
  values: unknown[] | undefined;
}) => QueryInternals;

export class OneSync extends Query {
  /** Names this submission sent a Parse for: unknown to the server if the batch failed. */
  readonly parsedHere: string[] = [];
  private conn: Connection | undefined;

  constructor(private readonly statements: [Statement, Statement]) {
    super({ text: statements[1].text, name: statements[1].name, values: statements[1].values });
  }

  override submit(connection: unknown): Error | null {
    const c = connection as Connection;
    this.conn = c;
    c.stream.cork();
    try {
      for (const s of this.statements) {
        const known = s.name !== '' && (c.parsedStatements[s.name] ?? c.submittedNamedStatements[s.name]);
        if (!known) {
          c.parse({ text: s.text, name: s.name });
          if (s.name !== '') {
            c.submittedNamedStatements[s.name] = s.text;
            this.parsedHere.push(s.name);
          }
        }
        c.bind({ statement: s.name, values: s.values ?? [], valueMapper: prepareValue });
        c.describe({ type: 'P', name: '' });
        c.execute({});
      }
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
      for (const s of this.statements) {
        if (s.name === '') continue;
        this.conn.parsedStatements[s.name] = s.text;
        delete this.conn.submittedNamedStatements[s.name];
      }
    }
    super.handleReadyForQuery(con);
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
