import type { Logger } from 'pino';
import type { Principal } from '../db/database.ts';
import type { FinalHeaders } from './cors.ts';

/** What middleware puts on the Hono context for handlers. */
export type AppEnv = {
  Variables: {
    requestId: string;
    log: Logger;
    /** Set by `authenticate`; absent on public routes. */
    principal: Principal;
    /** The caller's address: the socket's, or X-Forwarded-For as far as TRUST_PROXY allows. */
    clientIp: string;
    /** X-Request-Id and CORS headers for the final response (cors.ts, FinalHeaders). */
    finalHeaders: FinalHeaders;
    /** The MCP endpoint's metrics target: the tool called, or the JSON-RPC method (src/mcp/route.ts). */
    mcpTarget: string;
  };
};
