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
