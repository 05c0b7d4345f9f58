import { SCOPES } from '../domain/agent-keys.ts';

// The authorization server's addresses (RFC 8414). The issuer is PUBLIC_URL: the service is its
// own authorization server, and its MCP endpoint's resource metadata names it.

export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
  /** The dashboard's consent page (web/src/auth/Consent.tsx), where authorize sends the person. */
  consent: '/oauth/consent',
} as const;

/** Where the metadata lives: RFC 8414 section 3.1 puts the issuer's path after the well-known suffix. */
export const authorizationServerMetadataPath = (issuer: string) => {
  const path = new URL(issuer).pathname.replace(/\/$/, '');
  return `/.well-known/oauth-authorization-server${path}`;
};

export const authorizationServerMetadata = (issuer: string) => ({
  issuer,
  authorization_endpoint: `${issuer}${OAUTH_PATHS.authorize}`,
  token_endpoint: `${issuer}${OAUTH_PATHS.token}`,
  registration_endpoint: `${issuer}${OAUTH_PATHS.register}`,
  revocation_endpoint: `${issuer}${OAUTH_PATHS.revoke}`,
  response_types_supported: ['code'],
  response_modes_supported: ['query'],
  grant_types_supported: ['authorization_code', 'refresh_token'],
  code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['none'],
  revocation_endpoint_auth_methods_supported: ['none'],
  scopes_supported: [...SCOPES],
  client_id_metadata_document_supported: true,
  authorization_response_iss_parameter_supported: true,
});
