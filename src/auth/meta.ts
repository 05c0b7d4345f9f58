import { createRoute, z } from '@hono/zod-openapi';
import { jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';

const jwks = createRoute({
  method: 'get',
  path: '/.well-known/jwks.json',
  summary: 'Public keys that verify this service’s JWTs',
  responses: {
    200: jsonResponse(z.object({ keys: z.array(z.record(z.string(), z.unknown())) }), 'JSON Web Key Set'),
  },
});

const settings = createRoute({
  method: 'get',
  path: '/settings',
  summary: 'What sign-in methods are enabled',
  responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), 'Settings') },
});

const health = createRoute({
  method: 'get',
  path: '/health',
  summary: 'Identity provider liveness',
  responses: {
    200: jsonResponse(z.object({ version: z.string(), name: z.string(), description: z.string() }), 'Alive'),
  },
});

export function metaRoutes(s: Services) {
  return newRouter()
    .openapi(jwks, (c) => {
      c.header('Cache-Control', 'public, max-age=600');
      return c.json(s.tokens.jwks(), 200);
    })
    .openapi(settings, (c) =>
      c.json(
        {
          external: { email: true, phone: false, anonymous_users: false },
          disable_signup: false,
          mailer_autoconfirm: true,
          phone_autoconfirm: false,
          sms_provider: '',
          saml_enabled: false,
        },
        200,
      ),
    )
    .openapi(health, (c) =>
      c.json(
        { version: 'svc', name: 'GoTrue', description: 'svc identity provider, GoTrue-compatible' },
        200,
      ),
    );
}
