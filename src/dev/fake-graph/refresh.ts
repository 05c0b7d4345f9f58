// The fake's part for the connection check (src/jobs/check-connections.ts): Instagram's
// `GET /refresh_access_token?grant_type=ig_refresh_token` for a token of the accounts map (a fresh
// token replaces the old one for that account, 60 days, answered as Instagram does:
// `{access_token, token_type, expires_in}`), and planned failures of reads (GETs), which the
// send-side `failNext` leaves alone: an outage during the check. Development and tests only.
import type { FakeChannel, Fault } from './faults.ts';
import { graphError } from './faults.ts';

type Account = { token: string; channel: FakeChannel };
type Request = { method: string; path: string; query: Record<string, string> };

const SIXTY_DAYS = 60 * 86_400;
const REFRESH = /^\/(?:v\d+\.\d+\/)?refresh_access_token\/?$/;

/** What Graph answers during its own trouble (code 2, "Service temporarily unavailable"). */
export const serviceDown = (): Fault =>
  graphError(
    500,
    2,
    'An unexpected error has occurred. Please retry your request later.',
    'OAuthException',
    undefined,
    {
      is_transient: true,
    },
  );

export function createRefresh(
  accounts: () => Record<string, Account>,
  setAccount: (id: string, account: Account) => void,
) {
  let readFailures: Fault[] = [];
  let minted = 0;
  return {
    /** A planned read failure: Graph in trouble answers so before it looks at the token. */
    outage(r: Request): Fault | null {
      return r.method === 'GET' && readFailures.length ? (readFailures.shift() as Fault) : null;
    },
    /** The answer to a refresh; null for every other request. */
    answer(r: Request, token: string | null): Fault | null {
      if (r.method !== 'GET' || !REFRESH.test(r.path)) return null;
      if (r.query.grant_type !== 'ig_refresh_token')
        return graphError(400, 100, 'Unsupported grant type', 'OAuthException');
      const owned = Object.entries(accounts()).find(
        ([, a]) => a.token === token && a.channel === 'instagram',
      );
      if (!owned)
        return graphError(
          400,
          190,
          'Invalid OAuth access token - Cannot parse access token',
          'OAuthException',
        );
      const fresh = `IGQfresh${++minted}x${owned[0]}`;
      setAccount(owned[0], { token: fresh, channel: 'instagram' });
      return { status: 200, body: { access_token: fresh, token_type: 'bearer', expires_in: SIXTY_DAYS } };
    },
    /** The next `n` GETs (reads, /me, debug_token) get `fault` (Graph's 500 by default); 0 ends them. */
    failReadsNext(n: number, fault: Fault = serviceDown()) {
      readFailures = Array.from({ length: n }, () => fault);
    },
    reset() {
      readFailures = [];
    },
  };
}
