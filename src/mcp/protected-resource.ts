import { SCOPES } from '../domain/agent-keys.ts';
import { MCP_ALIAS, MCP_PATH } from './origin.ts';

// The MCP endpoint as an OAuth protected resource (RFC 9728): where a client that got a 401 learns
// which authorization server signs its tokens. The endpoint answers at two paths (the spec's
// /functions/v1/mcp-server and the /mcp that clients recognise); each is its own resource URL with
// its own metadata document, so a client checks the `resource` against the URL it was given.

export const MCP_PATHS = [MCP_PATH, MCP_ALIAS] as const;

/** The endpoint path of a request's path: one of MCP_PATHS, or undefined. */
export const mcpPathOf = (path: string) => MCP_PATHS.find((p) => p === path);

/** The resource URL of an endpoint path (what a token's `aud` names). */
export const resourceUrl = (publicUrl: string, path: string) => `${publicUrl}${path}`;

/** Where the metadata of an endpoint path lives (RFC 9728 section 3.1: the path after the suffix). */
export const metadataPath = (path: string) => `/.well-known/oauth-protected-resource${path}`;
export const metadataUrl = (publicUrl: string, path: string) =>
  `${new URL(publicUrl).origin}${metadataPath(path)}`;

/** The metadata document of an endpoint path. The service is its own authorization server. */
export const protectedResourceMetadata = (publicUrl: string, path: string) => ({
  resource: resourceUrl(publicUrl, path),
  authorization_servers: [publicUrl],
  scopes_supported: [...SCOPES],
  bearer_methods_supported: ['header'],
  resource_name: 'svc MCP server',
});

/** Audiences the MCP endpoint accepts: agent-auth's tokens ('authenticated') and its own URLs. */
export function acceptsAudience(aud: unknown, publicUrl: string): boolean {
  const own = new Set(['authenticated', ...MCP_PATHS.map((p) => resourceUrl(publicUrl, p))]);
  if (aud === undefined) return false;
  return (Array.isArray(aud) ? aud : [aud]).some((a) => typeof a === 'string' && own.has(a));
}

/**
 * The WWW-Authenticate challenge of a refusal at the endpoint (RFC 6750 section 3, RFC 9728
 * section 5.1): the metadata's URL, so a client can sign in; the error and its description, so a
 * person (or an agent holding a key) reads what to do; `scope` on insufficient_scope.
 */
export function mcpChallenge(
  metadata: string,
  fields: { error?: string; description?: string; scope?: string },
): string {
  const quoted = (v: string) => `"${v.replace(/["\\]/g, "'")}"`;
  const parts = [`resource_metadata=${quoted(metadata)}`];
  if (fields.error) parts.push(`error=${quoted(fields.error)}`);
  if (fields.scope) parts.push(`scope=${quoted(fields.scope)}`);
  if (fields.description) parts.push(`error_description=${quoted(fields.description)}`);
  return `Bearer ${parts.join(', ')}`;
}
