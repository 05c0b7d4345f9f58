import { createRoute, z } from '@hono/zod-openapi';
import { validationError } from '../platform/errors.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { currentUser } from './current-user.ts';
import { assertLongEnough } from './password.ts';
import { fitsInToken, MAX_METADATA_BYTES, Password, UserMetadata, UserSchema } from './schemas.ts';
import { findUserById, updateUser, userJson } from './users.ts';

const getUser = createRoute({
  method: 'get',
  path: '/user',
  summary: 'The signed-in user',
  responses: { 200: jsonResponse(UserSchema, 'The user'), ...errorResponses(401, 403) },
});

// auth-js also sends code_challenge fields (PKCE, for email changes we do not offer): ignored.
const updateRoute = createRoute({
  method: 'put',
  path: '/user',
  summary: 'Change the signed-in user’s password or metadata',
  description: 'A new password ends every other session of the user.',
  request: jsonBody(z.object({ password: Password.optional(), data: UserMetadata.optional() })),
  responses: { 200: jsonResponse(UserSchema, 'The updated user'), ...errorResponses(400, 401, 403, 422) },
});

export function userRoutes(s: Services) {
  return newRouter()
    .openapi(getUser, async (c) => {
      const { user } = await currentUser(s, c);
      return c.json(userJson(user), 200);
    })
    .openapi(updateRoute, async (c) => {
      const { user, sessionId } = await currentUser(s, c);
      const body = c.req.valid('json');
      if (body.password !== undefined) assertLongEnough(body.password);
      const metadata = body.data && { ...user.raw_user_meta_data, ...body.data };
      if (metadata && !fitsInToken(metadata)) {
        throw validationError([
          { path: 'data', message: `must be at most ${MAX_METADATA_BYTES} bytes as JSON` },
        ]);
      }
      const passwordHash = body.password === undefined ? undefined : await s.passwords.hash(body.password);
      await s.db.transaction((tx) => updateUser(tx, { id: user.id, sessionId }, { passwordHash, metadata }));
      return c.json(userJson((await findUserById(s.db, user.id)) ?? user), 200);
    });
}
