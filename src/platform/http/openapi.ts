import { OpenAPIHono, z } from '@hono/zod-openapi';
import { fromZodIssues } from '../errors.ts';
import type { AppEnv } from './env.ts';

/** Every router validates with zod and turns failures into 400 validation_error with issues. */
export function newRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw fromZodIssues(result.error.issues);
    },
  });
}

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ example: 'validation_error' }),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  })
  .openapi('Error');

export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      s,
      { description: 'Error', content: { 'application/json': { schema: ErrorSchema } } },
    ]),
  );

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  body: { required: true, description, content: { 'application/json': { schema } } },
});

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

type SecurityRequirement = Record<string, string[]>;
type Operation = {
  operationId?: string;
  security?: SecurityRequirement[];
  responses?: Record<string, unknown>;
};
type Document = ReturnType<OpenAPIHono['getOpenAPI31Document']>;

/** The credentials of this service: the gateway's `apikey` header and a bearer JWT. */
export const SECURITY_SCHEMES = {
  apikey: {
    type: 'apiKey',
    in: 'header',
    name: 'apikey',
    description: 'The anon key (or the service-role key): `svc keys` prints both',
  },
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A person’s access token (/auth/v1/token), an agent JWT (agent-auth) or the service-role key',
  },
} as const;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** `post /functions/v1/agent-auth` → `postFunctionsAgentAuth`: stable, readable, unique per route. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/\/v\d+(?=\/|$)/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1));
  return method.toLowerCase() + words.join('');
}

/**
 * The OpenAPI document with what every operation needs and no route has to remember: an
 * operationId (derived from method and path unless the route declares one), the security it
 * requires (`securityFor`, unless declared; `[]` for public routes), a 401 answer where
 * credentials are required, and the 503 any of them may answer. Two operations with one id are a build error, not a silent clash.
 */
export function openApiDocument(
  app: OpenAPIHono<AppEnv>,
  config: Parameters<OpenAPIHono['getOpenAPI31Document']>[0],
  securityFor: (path: string) => SecurityRequirement[],
): Document {
  app.openAPIRegistry.register('Error', ErrorSchema); // referenced by the 401s added below
  const doc = app.getOpenAPI31Document(config);
  doc.components = { ...doc.components, securitySchemes: SECURITY_SCHEMES };
  const seen = new Map<string, string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = (item as Record<string, Operation | undefined>)[method];
      if (!op) continue;
      op.operationId ??= operationIdOf(method, path);
      const other = seen.get(op.operationId);
      if (other) throw new Error(`operationId ${op.operationId} of ${method} ${path} is taken by ${other}`);
      seen.set(op.operationId, `${method} ${path}`);
      op.security ??= securityFor(path);
      if (!op.responses) continue;
      // The document is JSON by now: the Error schema is referenced, not converted again.
      const error = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
      if (op.security.length > 0 && !op.responses['401'])
        op.responses['401'] = { description: 'Missing or invalid credentials', content: error };
      // Any operation, while the database is out of reach or the process is stopping (issue 26).
      op.responses['503'] ??= {
        description:
          'Briefly unavailable (service_unavailable): send the request again after Retry-After seconds',
        headers: { 'Retry-After': { schema: { type: 'integer' } } },
        content: error,
      };
    }
  }
  return doc;
}
