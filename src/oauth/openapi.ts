import { z } from '@hono/zod-openapi';
import { SCOPES } from '../domain/agent-keys.ts';
import { jsonBody, jsonResponse, type newRouter } from '../platform/http/openapi.ts';
import { OAUTH_PATHS } from './metadata.ts';

// The authorization server's routes in /openapi.json. They read forms and answer in OAuth's shapes
// (RFC 6749 section 5.2), so they are plain Hono routes described here, as the MCP endpoint is.

/** An OAuth error: `error` and `error_description` as RFC 6749 names them, and this service's `message`, `details`. */
const OAuthError = z
  .object({
    error: z.string().openapi({ example: 'invalid_grant' }),
    error_description: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  })
  .openapi('OAuthError');

const oauthErrors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, jsonResponse(OAuthError, 'OAuth error')]));

const form = (schema: z.ZodObject) => ({
  body: {
    required: true,
    content: { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } },
  },
});

const TokenAnswer = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string(),
  scope: z.string().openapi({ example: 'read write' }),
});

const Redirect = z.object({ redirect_to: z.string() });

/** The consent page's calls carry the authorization request's own query parameters. */
const ConsentParams = z.object({ params: z.record(z.string(), z.string()) });

export function describeOAuth(app: ReturnType<typeof newRouter>, metadataPath: string) {
  const r = app.openAPIRegistry;
  r.registerPath({
    method: 'get',
    path: metadataPath,
    summary: 'Authorization server metadata (RFC 8414)',
    responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), 'The metadata') },
  });
  r.registerPath({
    method: 'post',
    path: OAUTH_PATHS.register,
    summary: 'Register an MCP client (RFC 7591; public clients, no secret)',
    request: jsonBody(
      z.object({
        redirect_uris: z.array(z.string()).min(1).max(20),
        client_name: z.string().optional(),
      }),
    ),
    responses: {
      201: jsonResponse(z.record(z.string(), z.unknown()), 'The client, with its client_id'),
      ...oauthErrors(400, 429),
    },
  });
  r.registerPath({
    method: 'get',
    path: OAUTH_PATHS.authorize,
    summary: 'Start an authorization (code flow with PKCE S256)',
    description:
      'Sends the person to the consent page; a bad client or redirect URI is answered here, any other error at the redirect URI.',
    request: {
      query: z.object({
        response_type: z.literal('code'),
        client_id: z.string(),
        redirect_uri: z.string(),
        code_challenge: z.string(),
        code_challenge_method: z.literal('S256'),
        scope: z
          .string()
          .optional()
          .openapi({ example: SCOPES.join(' ') }),
        state: z.string().optional(),
        resource: z.string().optional(),
      }),
    },
    responses: {
      302: { description: 'To the consent page, or to the client with an error' },
      ...oauthErrors(400, 429),
    },
  });
  r.registerPath({
    method: 'post',
    path: `${OAUTH_PATHS.authorize}/describe`,
    summary: 'The consent page: what the client asks and which organizations the person may grant',
    security: [{ bearer: [] }],
    request: jsonBody(ConsentParams),
    responses: {
      200: jsonResponse(z.record(z.string(), z.unknown()), 'The request, for the person'),
      ...oauthErrors(400, 401),
    },
  });
  r.registerPath({
    method: 'post',
    path: `${OAUTH_PATHS.authorize}/decision`,
    summary: "The consent page: the person's answer",
    security: [{ bearer: [] }],
    request: jsonBody(
      ConsentParams.extend({
        approve: z.boolean(),
        organization_id: z.string().uuid().optional(),
        scopes: z.array(z.enum(SCOPES)).optional(),
      }),
    ),
    responses: {
      200: jsonResponse(Redirect, 'Where to send the browser'),
      ...oauthErrors(400, 401, 403, 429),
    },
  });
  r.registerPath({
    method: 'post',
    path: OAUTH_PATHS.token,
    summary: 'Exchange a code, or rotate a refresh token',
    request: form(
      z.object({
        grant_type: z.enum(['authorization_code', 'refresh_token']),
        client_id: z.string(),
        code: z.string().optional(),
        code_verifier: z.string().optional(),
        redirect_uri: z.string().optional(),
        refresh_token: z.string().optional(),
        resource: z.string().optional(),
      }),
    ),
    responses: {
      200: jsonResponse(TokenAnswer, 'An agent JWT for the MCP endpoint'),
      ...oauthErrors(400, 429),
    },
  });
  r.registerPath({
    method: 'post',
    path: OAUTH_PATHS.revoke,
    summary: 'Revoke a grant by its access or refresh token (RFC 7009)',
    request: form(z.object({ token: z.string(), client_id: z.string() })),
    responses: { 200: { description: 'Revoked, or nothing to revoke' }, ...oauthErrors(400, 429) },
  });
}
