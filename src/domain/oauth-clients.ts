import { randomBytes } from 'node:crypto';
import { SERVICE } from '../platform/db/database.ts';
import { AppError } from '../platform/errors.ts';
import type { Deps } from './deps.ts';

// The MCP clients the authorization server knows (issue 31): registered by Dynamic Client
// Registration (RFC 7591), or named by the https URL of their Client ID Metadata Document, which
// is fetched (with the media downloads' guard against private addresses) and kept for an hour.

/** An OAuth error answered in RFC 6749's shape (`error`, `error_description`) by src/oauth. */
export const oauthError = (status: number, code: string, description: string) =>
  new AppError(status, code, description);

export type OAuthClient = { client_id: string; client_name: string; redirect_uris: string[] };

/** How long a fetched metadata document is trusted before it is fetched again. */
export const DOCUMENT_TTL_SECONDS = 3600;
/** A registration no consent used within this time is forgotten. */
export const UNUSED_REGISTRATION_SECONDS = 24 * 3600;

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const REFUSED_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:']);

/** Whether a redirect URI may be registered: https, http on a loopback address, or an app's own scheme. */
export function acceptableRedirect(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash || url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  if (url.protocol === 'http:') return LOOPBACK.has(url.hostname);
  return !REFUSED_SCHEMES.has(url.protocol);
}

/**
 * Whether `given` is one of the client's redirect URIs: exactly, or (RFC 8252 section 7.3) a
 * loopback http URI that differs only by its port, since native apps listen on whatever port is free.
 */
export function redirectMatches(registered: string[], given: string): boolean {
  if (registered.includes(given)) return true;
  let g: URL;
  try {
    g = new URL(given);
  } catch {
    return false;
  }
  if (g.protocol !== 'http:' || !LOOPBACK.has(g.hostname)) return false;
  const portless = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((r) => {
    try {
      const u = new URL(r);
      return u.protocol === 'http:' && LOOPBACK.has(u.hostname) && portless(u) === portless(g);
    } catch {
      return false;
    }
  });
}

const nameOf = (v: unknown, fallback: string) =>
  typeof v === 'string' && v.trim() ? v.trim().slice(0, 200) : fallback;

function checkedRedirects(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0 || v.length > 20 || !v.every((u) => typeof u === 'string'))
    throw oauthError(400, 'invalid_redirect_uri', 'redirect_uris must be a list of 1 to 20 URIs');
  const bad = v.find((u) => !acceptableRedirect(u));
  if (bad)
    throw oauthError(
      400,
      'invalid_redirect_uri',
      `${bad} is not accepted: use https, http on a loopback address (127.0.0.1, [::1], localhost) or an app's own scheme`,
    );
  return v;
}

/** RFC 7591 registration of a public client; forgets registrations left unused meanwhile. */
export async function registerClient(deps: Pick<Deps, 'db'>, metadata: Record<string, unknown>, ip: string) {
  const redirectUris = checkedRedirects(metadata.redirect_uris);
  const grantTypes = metadata.grant_types ?? ['authorization_code', 'refresh_token'];
  if (
    !Array.isArray(grantTypes) ||
    grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token')
  )
    throw oauthError(
      400,
      'invalid_client_metadata',
      'grant_types may be authorization_code and refresh_token only',
    );
  const clientId = `svc_oc_${randomBytes(18).toString('base64url')}`;
  const name = nameOf(metadata.client_name, new URL(redirectUris[0] as string).host || 'MCP client');
  const [row] = await deps.db.asPrincipal(SERVICE, async (tx) => {
    await tx.query(
      `delete from app.oauth_clients
        where kind = 'registered' and used_at is null and created_at < now() - make_interval(secs => $1)`,
      [UNUSED_REGISTRATION_SECONDS],
    );
    return tx.query<{ created: number }>(
      `insert into app.oauth_clients (client_id, kind, client_name, redirect_uris, registered_ip)
       values ($1, 'registered', $2, $3, $4) returning extract(epoch from created_at)::int as created`,
      [clientId, name, redirectUris, ip],
    );
  });
  return {
    client_id: clientId,
    client_id_issued_at: row?.created ?? Math.floor(Date.now() / 1000),
    client_name: name,
    redirect_uris: redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** Fetches a Client ID Metadata Document's JSON (the SSRF-guarded fetch; src/platform). */
export type FetchDocument = (url: string) => Promise<unknown>;

/** Whether a client_id is a metadata document's URL (an https URL with a path). */
export const isDocumentUrl = (clientId: string) => /^https?:\/\/[^/]+\/./.test(clientId);

/**
 * The client a client_id names, or an invalid_client error. A document is fetched when it is not
 * known or is older than DOCUMENT_TTL_SECONDS; its client_id must be its own URL.
 */
export async function findClient(
  deps: Pick<Deps, 'db'>,
  clientId: string,
  fetchDocument: FetchDocument,
): Promise<OAuthClient> {
  const [row] = await deps.db.asPrincipal(SERVICE, (tx) =>
    tx.query<OAuthClient & { kind: string; fresh: boolean; expired: boolean }>(
      `select client_id, client_name, redirect_uris, kind,
              fetched_at > now() - make_interval(secs => $2) as fresh,
              kind = 'registered' and used_at is null
                and created_at < now() - make_interval(secs => $3) as expired
         from app.oauth_clients where client_id = $1`,
      [clientId, DOCUMENT_TTL_SECONDS, UNUSED_REGISTRATION_SECONDS],
    ),
  );
  if (row && row.kind === 'registered' && !row.expired) return row;
  if (row?.kind === 'metadata_document' && row.fresh) return row;
  if (!isDocumentUrl(clientId)) {
    throw oauthError(
      401,
      'invalid_client',
      'Unknown client_id: register the client (registration_endpoint) or use the URL of its metadata document',
    );
  }
  let doc: unknown;
  try {
    doc = await fetchDocument(clientId);
  } catch (err) {
    throw oauthError(
      401,
      'invalid_client',
      `The client's metadata document could not be read: ${(err as Error).message}`,
    );
  }
  const d = (doc ?? {}) as Record<string, unknown>;
  if (d.client_id !== clientId)
    throw oauthError(401, 'invalid_client', 'The metadata document’s client_id is not its own URL');
  let redirectUris: string[];
  try {
    redirectUris = checkedRedirects(d.redirect_uris);
  } catch (err) {
    throw oauthError(401, 'invalid_client', `The metadata document: ${(err as Error).message}`);
  }
  const client = {
    client_id: clientId,
    client_name: nameOf(d.client_name, new URL(clientId).host),
    redirect_uris: redirectUris,
  };
  await deps.db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      `insert into app.oauth_clients (client_id, kind, client_name, redirect_uris, fetched_at)
       values ($1, 'metadata_document', $2, $3, now())
       on conflict (client_id) do update set client_name = excluded.client_name,
         redirect_uris = excluded.redirect_uris, fetched_at = now()`,
      [client.client_id, client.client_name, client.redirect_uris],
    ),
  );
  return client;
}
