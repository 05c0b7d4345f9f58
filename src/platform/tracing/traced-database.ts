import { context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { Database, Queryable } from '../db/database.ts';

/**
 * The database with a span per statement and per transaction, only under a span already active
 * (a request's): the job queue's polling and the worker's own statements make no root spans of
 * their own. The statement's text is recorded (values never: statements take them as parameters),
 * at most 2,000 characters.
 */
export function tracedDatabase(db: Database, tracer: Tracer): Database {
  const system = db.engine === 'postgres' ? 'postgresql' : 'pglite';
  const traced = <T>(name: string, sql: string | null, fn: () => Promise<T>): Promise<T> => {
    if (!trace.getSpan(context.active())) return fn();
    const attributes: Record<string, string> = { 'db.system.name': system };
    if (sql !== null) attributes['db.query.text'] = sql.length > 2000 ? sql.slice(0, 2000) : sql;
    return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, (span: Span) =>
      fn().then(
        (v) => {
          span.end();
          return v;
        },
        (err: Error) => {
          span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
          span.end();
          throw err;
        },
      ),
    );
  };
  const inTx = (tx: Queryable): Queryable => ({
    query: (sql, params) => traced('db.query', sql, () => tx.query(sql, params)),
  });
  return {
    ...db, // engine, withAdvisoryLock, listen, close, stats: as they are
    query: (sql, params, opts) => traced('db.query', sql, () => db.query(sql, params, opts)),
    script: (sql) => traced('db.script', sql, () => db.script(sql)),
    transaction: (fn) => traced('db.transaction', null, () => db.transaction((tx) => fn(inTx(tx)))),
    asPrincipal: (principal, fn, opts) =>
      traced('db.transaction', null, () => db.asPrincipal(principal, (tx) => fn(inTx(tx)), opts)),
    queryAs: (principal, sql, params, opts) =>
      traced('db.query', sql, () => db.queryAs(principal, sql, params, opts)),
  };
}
