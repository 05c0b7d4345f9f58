import { AppError, type ErrorDetails } from '../platform/errors.ts';
import type { Relation } from './schema-cache.ts';

// Every refusal /rest/v1 makes itself, by name. Each owns its HTTP status, our `error` code and
// the PostgREST `code` that postgrest-js hands to the caller (docs/decisions.md, "/rest/v1").
// Errors the database raises are worded by db-errors.ts and src/platform/errors.ts instead.

const rest = (
  status: number,
  error: string,
  code: string,
  message: string,
  details: ErrorDetails = {},
  hint: string | null = null,
) => new AppError(status, error, message, details, { code, hint });

const issue = (path: string, message: string) => ({ issues: [{ path, message }] });

/** PGRST100: the query string does not follow the grammar. */
export const parseError = (message: string, details: ErrorDetails = {}) =>
  rest(400, 'validation_error', 'PGRST100', message, details);

/** PGRST102: the body is not JSON, or not the JSON a write needs. */
export const badBody = (message: string) =>
  rest(400, 'validation_error', 'PGRST102', message, issue('', message));

/** PGRST103: an offset or Range past the rows there are. */
export const rangeNotSatisfiable = (message: string) =>
  rest(416, 'range_not_satisfiable', 'PGRST103', message);

/** PGRST107: the Accept header names nothing /rest/v1 produces (accept.ts). */
export const notAcceptable = (accept: string) =>
  rest(
    406,
    'not_acceptable',
    'PGRST107',
    `None of these media types are available: ${accept}`,
    {},
    'Accept application/json, application/vnd.pgrst.object+json or, for reads, text/csv',
  );

/** PGRST108: a filter, order or limit for an embedded resource the select does not embed. */
export const embedNotSelected = (path: string) =>
  rest(
    400,
    'validation_error',
    'PGRST108',
    `"${path}" is not an embedded resource of this request`,
    issue(path, 'not embedded in select'),
    `Embed it in select, e.g. select=*,${path.split('.').at(-1)}(*)`,
  );

/** PGRST116: a single object was asked for (Accept: application/vnd.pgrst.object+json). */
export const notSingle = (rows: number, write = false) =>
  rest(
    406,
    'not_acceptable',
    'PGRST116',
    `The ${write ? 'write affected' : 'result contains'} ${rows} rows; a single object needs exactly one`,
  );

/** PGRST119: only a to-one relationship can be spread into its parent. */
export const spreadToMany = (parent: string, child: string) =>
  rest(
    400,
    'validation_error',
    'PGRST119',
    `"${child}" cannot be spread into "${parent}": each "${parent}" row has many of them`,
    issue(child, 'spread needs a to-one relationship'),
    `Embed it instead: ${child}(…)`,
  );

/** PGRST120: an embedded resource itself can only be filtered by is.null / not.is.null. */
export const embedFilter = (path: string) =>
  rest(
    400,
    'validation_error',
    'PGRST120',
    `The embedded resource "${path}" can only be filtered with is.null or not.is.null`,
    issue(path, 'only is.null and not.is.null'),
  );

/** PGRST122: `Prefer: handling=strict` with preferences this interface does not honour. */
export const invalidPreferences = (invalid: string[]) =>
  rest(400, 'validation_error', 'PGRST122', 'Invalid preferences given with handling=strict', {
    invalid_preferences: invalid,
  });

/** Aggregates are grouped by the plain columns beside them; embedding too would need those groups. */
export const aggregateWithEmbed = () =>
  parseError('Aggregates cannot be combined with embedded resources in the same select', {
    issues: [{ path: 'select', message: 'aggregate beside an embedded resource' }],
  });

/** PGRST200: no foreign key joins the two. */
export const notRelated = (parent: string, child: string, hint?: string) =>
  rest(
    400,
    'validation_error',
    'PGRST200',
    hint
      ? `"${parent}" and "${child}" are not related by a foreign key named or using "${hint}"`
      : `"${parent}" and "${child}" are not related by a foreign key`,
    issue(child, 'no relationship'),
  );

/** PGRST201: several foreign keys join the two; the caller must name one. */
export const ambiguousEmbed = (parent: string, child: string, keys: string[]) =>
  rest(
    300,
    'ambiguous_embedding',
    'PGRST201',
    `More than one relationship joins "${parent}" and "${child}"`,
    { relationships: keys },
    `Name one: ${child}!<foreign key name>(…), one of ${keys.join(', ')}`,
  );

/** PGRST202: no function is exposed (see rpc.ts for the wording PostgREST uses). */
export const functionNotFound = (message: string, searched: string) =>
  rest(404, 'not_found', 'PGRST202', message, { searched });

/** What a misspelt column could have been: the columns the interface serves on the table. */
export const columnsHint = (rel: Relation) =>
  `Columns of "${rel.name}": ${[...rel.columns.keys()].join(', ')}`;

/** 42703: a column the table does not have (or the caller may not see), in a read. */
export const unknownColumn = (rel: Relation, column: string) =>
  rest(
    400,
    'validation_error',
    '42703',
    `Column "${column}" does not exist on "${rel.name}"`,
    issue(column, 'no such column'),
    columnsHint(rel),
  );

/** PGRST204: a column of a write's body or ?columns that the table does not have. */
export const unknownWriteColumn = (rel: Relation, column: string) =>
  rest(
    400,
    'validation_error',
    'PGRST204',
    `Could not find the "${column}" column of "${rel.name}"`,
    issue(column, 'no such column'),
    columnsHint(rel),
  );

/** 42P01: not a table or view the interface exposes (PostgREST 11's code, which supabase-js knows). */
export const relationNotFound = (table: string) =>
  rest(404, 'not_found', '42P01', `No table or view "${table}" in the exposed schema`);

/**
 * 21000: an update or delete without a filter, as Supabase answers it (its pg-safeupdate
 * refuses a statement that would touch every row).
 */
export const filterRequired = (verb: 'UPDATE' | 'DELETE') =>
  rest(
    400,
    'validation_error',
    '21000',
    `${verb} requires a WHERE clause: add a filter, or it would touch every row`,
    issue('', 'no filter'),
    'Filter by id, e.g. ?id=eq.<uuid>',
  );

/** 42P10: on_conflict names no unique key; the answer lists the keys there are. */
export function noUniqueKey(rel: Relation, target: string[]) {
  const keys = rel.uniques.map((u) => `(${u.columns.join(', ')})`);
  const containing = rel.uniques.find((u) => target.every((c) => u.columns.includes(c)));
  const wanted = `(${target.join(', ')})`;
  return rest(
    400,
    'validation_error',
    '42P10',
    `No unique key of "${rel.name}" is ${wanted}: on_conflict must name all the columns of one of ${keys.join(', ') || 'its unique keys (it has none)'}`,
    {
      issues: [{ path: 'on_conflict', message: `no unique key is ${wanted}` }],
      unique_keys: rel.uniques.map((u) => ({ name: u.name, columns: u.columns })),
    },
    containing
      ? `Use on_conflict=${containing.columns.join(',')}`
      : `Use on_conflict with the columns of one of ${keys.join(', ')}`,
  );
}
