import { createRoute, z } from '@hono/zod-openapi';
import { createOrganization } from '../domain/organizations.ts';
import { CountryInput } from '../domain/phone.ts';
import { addressKey } from '../platform/http/client-ip.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import { rateLimited } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';
import { userAlreadyExists } from './errors.ts';
import { assertLongEnough } from './password.ts';
import { Email, fitsInToken, MAX_METADATA_BYTES, Password, SessionSchema } from './schemas.ts';
import { startSession } from './session.ts';
import { findUserById, insertUser, setCurrentOrganization } from './users.ts';

const route = createRoute({
  method: 'post',
  path: '/signup',
  summary: 'Create an account (confirmed at once) and sign in',
  description:
    'With `data.organization_name`, also creates that organization on the free plan with the new user as its owner; `data.organization_country` (ISO 3166-1 alpha-2) reads its phone numbers typed in national form.',
  request: jsonBody(
    z.object({
      email: Email,
      password: Password,
      data: z
        .object({
          organization_name: z.string().trim().min(1).max(200).optional(),
          organization_country: CountryInput.optional(),
        })
        .catchall(z.unknown())
        .refine(fitsInToken, `must be at most ${MAX_METADATA_BYTES} bytes as JSON`)
        .default({}),
    }),
  ),
  responses: { 200: jsonResponse(SessionSchema, 'The new session'), ...errorResponses(400, 422, 429) },
});

export function signupRoutes(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const body = c.req.valid('json');
    const ip = c.get('clientIp');
    const limit = await s.limits.signupPerIp.hit(addressKey(ip));
    if (!limit.allowed) throw rateLimited(limit.retryAfterSeconds, 'sign-ups from this address');
    assertLongEnough(body.password);
    const passwordHash = await s.passwords.hash(body.password);
    const { organization_name: orgName, organization_country: country, ...userMetadata } = body.data;
    try {
      const session = await s.db.transaction(async (tx) => {
        const userId = await insertUser(tx, { email: body.email, passwordHash, userMetadata });
        if (orgName) {
          const org = await createOrganization(tx, { name: orgName, country, ownerUserId: userId });
          await setCurrentOrganization(tx, userId, org.id);
        }
        const user = await findUserById(tx, userId);
        if (!user) throw new Error('user vanished inside its own transaction');
        return startSession(s.sessions, tx, user, {
          ip,
          userAgent: c.req.header('user-agent'),
        });
      });
      return c.json(session, 200);
    } catch (err) {
      if ((err as { code?: string; constraint?: string }).constraint === 'users_email_key')
        throw userAlreadyExists();
      throw err;
    }
  });
}
