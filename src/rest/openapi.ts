import { DEFAULT_PAGE, MAX_PAGE } from './range.ts';
import type { SchemaCache } from './schema-cache.ts';

const JSON_TYPES: [RegExp, string][] = [
  [/^(integer|bigint|smallint)$/, 'integer'],
  [/^(numeric|real|double precision)/, 'number'],
  [/^boolean$/, 'boolean'],
  [/\[\]$/, 'array'],
  [/^jsonb?$/, 'object'],
];

const jsonType = (pgType: string) => JSON_TYPES.find(([re]) => re.test(pgType))?.[1] ?? 'string';

/** The read parameters, with the page size said where a client reads it (a short page is not the end). */
const READ_PARAMETERS = [
  {
    name: 'select',
    in: 'query',
    type: 'string',
    description: 'Columns, embeds (`rel!inner(…)`, `...rel(…)`) and aggregates (`count()`, `col.sum()`)',
  },
  {
    name: 'order',
    in: 'query',
    type: 'string',
    description: '`column.asc|desc[.nullsfirst|nullslast]`, comma-separated',
  },
  {
    name: 'limit',
    in: 'query',
    type: 'integer',
    minimum: 0,
    default: DEFAULT_PAGE,
    maximum: MAX_PAGE,
    description: `Rows per page: ${DEFAULT_PAGE} by default, at most ${MAX_PAGE}; a larger limit answers ${MAX_PAGE} rows, and Content-Range tells which`,
  },
  { name: 'offset', in: 'query', type: 'integer', minimum: 0, default: 0 },
  {
    name: 'Range',
    in: 'header',
    type: 'string',
    description: '`first-last`, instead of limit and offset (same maximum)',
  },
  {
    name: 'Prefer',
    in: 'header',
    type: 'string',
    description: '`count=exact|planned|estimated`, `handling=strict|lenient`',
  },
];

/**
 * The description PostgREST serves at its root (Swagger 2.0): one path per exposed table or view
 * and one definition per relation, with the columns the caller's role may see, from the schema
 * cache.
 */
export function restOpenApi(schema: SchemaCache, publicUrl: string) {
  const url = new URL(publicUrl);
  const paths: Record<string, unknown> = {};
  const definitions: Record<string, unknown> = {};
  for (const rel of [...schema.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const ref = { $ref: `#/definitions/${rel.name}` };
    const ok = { description: 'OK', schema: { type: 'array', items: ref } };
    paths[`/${rel.name}`] = {
      get: {
        tags: [rel.name],
        parameters: READ_PARAMETERS,
        responses: {
          200: ok,
          206: { ...ok, description: 'Part of a counted result (Content-Range: first-last/total)' },
        },
      },
      post: { tags: [rel.name], responses: { 201: { description: 'Created' } } },
      patch: { tags: [rel.name], responses: { 200: ok, 204: { description: 'No Content' } } },
      delete: { tags: [rel.name], responses: { 200: ok, 204: { description: 'No Content' } } },
    };
    definitions[rel.name] = {
      type: 'object',
      required: [...rel.columns.values()].filter((c) => !c.nullable).map((c) => c.name),
      properties: Object.fromEntries(
        [...rel.columns.values()].map((c) => [
          c.name,
          {
            type: jsonType(c.type),
            format: c.type,
            ...(rel.pk.includes(c.name) ? { description: 'Primary key' } : {}),
          },
        ]),
      ),
    };
  }
  // No function is exposed: every call answers 404 PGRST202, described so clients are not left guessing.
  const none = { description: 'No function is exposed: always 404, code PGRST202' };
  paths['/rpc/{name}'] = {
    parameters: [{ name: 'name', in: 'path', type: 'string', required: true }],
    get: { tags: ['rpc'], responses: { 404: none } },
    post: { tags: ['rpc'], responses: { 404: none } },
  };
  return {
    swagger: '2.0',
    info: {
      title: 'svc database REST interface',
      version: '1.0.0',
      description: 'PostgREST-compatible; rows are filtered by row-level security.',
    },
    host: url.host,
    basePath: '/rest/v1',
    schemes: [url.protocol.replace(':', '')],
    consumes: ['application/json'],
    produces: ['application/json', 'application/vnd.pgrst.object+json', 'text/csv'],
    paths,
    definitions,
  };
}
