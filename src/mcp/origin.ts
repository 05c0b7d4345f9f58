import type { Config } from '../config.ts';
import { type AppError, forbidden } from '../platform/errors.ts';

// Who may reach the MCP endpoint from a browser. The Streamable HTTP specification says a server
// must validate Origin (a page on another site could otherwise drive a local server), and one
// bound to a loopback address must also resist DNS rebinding: a hostile name that resolves to
// 127.0.0.1 reaches it with that name as Host. Agents trip neither check: they send no Origin,
// and as Host the address they connected to.

export const MCP_PATH = '/functions/v1/mcp-server';
/** The same endpoint where MCP clients (and the Inspector) expect it: `{base_url}/mcp`. */
export const MCP_ALIAS = '/mcp';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export type OriginPolicy = {
  /** The Origin header's value may call the endpoint (the CORS answer repeats it, never `*`). */
  allowsOrigin(origin: string): boolean;
  /** Why a request is refused (403 forbidden), or undefined when its Origin and Host are fine. */
  refusal(headers: { origin?: string; host?: string }): AppError | undefined;
};

/** The service's own origin (PUBLIC_URL, else where it listens) and MCP_ALLOWED_ORIGINS. */
export function originPolicy(
  config: Pick<Config, 'host' | 'mcpAllowedOrigins'>,
  publicUrl: string,
): OriginPolicy {
  const own = new URL(publicUrl);
  const origins = new Set([own.origin, ...config.mcpAllowedOrigins]);
  const loopbackOnly = LOOPBACK_NAMES.has(config.host.toLowerCase());
  // A reverse proxy in front of a loopback-bound service usually forwards the public Host: the
  // names the operator configured (PUBLIC_URL, the allowed origins) are as good as loopback ones.
  const names = new Set([
    ...LOOPBACK_NAMES,
    own.hostname,
    ...config.mcpAllowedOrigins.map((o) => new URL(o).hostname),
  ]);
  const hostName = (host: string) => {
    try {
      return new URL(`http://${host}`).hostname.toLowerCase();
    } catch {
      return undefined;
    }
  };
  // localhost, 127.0.0.1 and [::1] name one machine: when PUBLIC_URL is one of them, a page at
  // another of them on the same port is the service's own page (the conformance suite's
  // LocalhostHostAccepted); a different port is another site.
  const ownIsLoopback = LOOPBACK_NAMES.has(own.hostname);
  const sameLoopbackOrigin = (origin: string) => {
    try {
      const u = new URL(origin);
      return LOOPBACK_NAMES.has(u.hostname) && u.protocol === own.protocol && u.port === own.port;
    } catch {
      return false;
    }
  };
  const allowsOrigin = (origin: string) =>
    origins.has(origin) || (ownIsLoopback && sameLoopbackOrigin(origin));
  return {
    allowsOrigin,
    refusal({ origin, host }) {
      if (origin !== undefined && !allowsOrigin(origin)) {
        return forbidden(
          'This origin may not call the MCP endpoint: browsers may only from the service’s own address or an origin in MCP_ALLOWED_ORIGINS',
          { origin },
        );
      }
      if (loopbackOnly) {
        const name = host === undefined ? undefined : hostName(host);
        if (!name || !names.has(name)) {
          return forbidden(
            'The service listens on a loopback address and answers only requests addressed to localhost, its PUBLIC_URL or a host of MCP_ALLOWED_ORIGINS',
            { host: host ?? null },
          );
        }
      }
      return undefined;
    },
  };
}
