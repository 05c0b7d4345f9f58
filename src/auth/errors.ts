import { AppError } from '../platform/errors.ts';

// GoTrue's codes and messages, which @supabase/auth-js turns into its typed errors.
export const invalidCredentials = () => new AppError(400, 'invalid_credentials', 'Invalid login credentials');
export const userAlreadyExists = () => new AppError(422, 'user_already_exists', 'User already registered');
export const weakPassword = (message: string) =>
  new AppError(
    422,
    'weak_password',
    message,
    { reasons: ['length'] },
    { weak_password: { reasons: ['length'] } },
  );
export const refreshTokenNotFound = () =>
  new AppError(400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
export const refreshTokenAlreadyUsed = () =>
  new AppError(400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used');
export const noAuthorization = () =>
  new AppError(401, 'no_authorization', 'This endpoint requires a valid Bearer token');
export const badJwt = (why: string) => new AppError(403, 'bad_jwt', `invalid JWT: ${why}`);
export const sessionNotFound = () =>
  new AppError(403, 'session_not_found', 'Session from session_id claim in JWT does not exist');
/**
 * An agent's JWT is valid but names no user: GoTrue's 403 bad_jwt (what auth-js expects of a token
 * /user cannot use), with a message that says why and where the token does work.
 */
export const agentIsNotAUser = () =>
  badJwt(
    'this is an AI agent’s token, and an agent is not a user: use it on /rest/v1, the functions and the MCP server; /auth/v1 serves people',
  );
