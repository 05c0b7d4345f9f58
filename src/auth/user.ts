import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { currentUser } from './current-user.ts';
import { weakPassword } from './errors.ts';
import { MIN_PASSWORD_LENGTH } from './password.ts';
import { Password, UserSchema } from './schemas.ts';
import { findUserById, userJson } from './users.ts';

const getUser = createRoute({
  method: 'get',
  path: '/user',
  summary: 'The signed-in user',
  responses: { 200: jsonResponse(UserSchema, 'The user'), ...errorResponses(401, 403) },
});

const updateUser = createRoute({
  method: 'put',
  path: '/user',
  summary: 'Change the signed-in user’s password or metadata',
  request: jsonBody(
    z.object({ password: Password.optional(), data: z.record(z.string(), z.unknown()).optional() }).strict(),
  ),
  responses: { 200: jsonResponse(UserSchema, 'The updated user'), ...errorResponses(400, 401, 403, 422) },
});

export function userRoutes(s: Services) {
  return newRouter()
    .openapi(getUser, async (c) => {
      const { user } = await currentUser(s, c);
      return c.json(userJson(user), 200);
    })
    .openapi(updateUser, async (c) => {
      const { user } = await currentUser(s, c);
      const body = c.req.valid('json');
      if (body.password !== undefined && [...body.password].length < MIN_PASSWORD_LENGTH) {
        throw weakPassword(`Password should be at least ${MIN_PASSWORD_LENGTH} characters.`);
      }
      const hash = body.password === undefined ? null : await s.passwords.hash(body.password);
      await s.db.query(
        `update auth.users
            set encrypted_password = coalesce($2, encrypted_password),
                raw_user_meta_data = raw_user_meta_data || coalesce($3::jsonb, '{}'::jsonb)
          where id = $1`,
        [user.id, hash, body.data === undefined ? null : JSON.stringify(body.data)],
      );
      return c.json(userJson((await findUserById(s.db, user.id)) ?? user), 200);
    });
}
