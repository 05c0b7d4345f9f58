// Graph API failures → one value the send flow can act on: retry later (transient) or give up and
// record Meta's code (permanent). Takes an HTTP status and the parsed answer (or a local failure:
// timeout, network error); gives out a GraphFailure. The codes and their sources are listed in
// docs/graph-api.md; keep the two in step.

/** What Meta said went wrong, as Graph's error body carries it (`{error: {...}}`). */
export type GraphErrorInfo = {
  /** Graph's numeric code; null when no Graph body came back (timeout, network, a proxy's page). */
  code: number | null;
  subcode: number | null;
  /** Graph's `type` (OAuthException, GraphMethodException, …); ours for local failures: timeout, network_error, http_error, invalid_response. */
  type: string;
  message: string;
  fbtrace_id: string | null;
  /** WhatsApp's `error_data.details`: Meta recommends reading it beside `code`. */
  details?: string;
};

export type GraphFailure = {
  ok: false;
  /** True: the same request may succeed later (retry with backoff). False: it never will as is. */
  transient: boolean;
  /** The HTTP status Meta answered with; null when no answer came (timeout, network error). */
  status: number | null;
  error: GraphErrorInfo;
};

/**
 * Codes Meta documents as temporary: its own downtime or throttling. Everything else Meta answers
 * with a 4xx is a refusal of this request (token, permission, parameter, recipient, window,
 * template) and is permanent.
 */
export const TRANSIENT_CODES: ReadonlySet<number> = new Set([
  1, // API Unknown: "possibly a temporary issue due to downtime; wait and retry" (Graph error handling)
  2, // API Service: temporary, downtime (Graph error handling; WhatsApp: 503)
  4, // API Too Many Calls: app-level throttling (Graph; WhatsApp throttling errors)
  17, // API User Too Many Calls (Graph error handling)
  32, // Page-level rate limit (Graph rate limiting)
  341, // Application limit reached (Graph error handling)
  613, // Calls to this API have exceeded the rate limit (Messenger Send API errors)
  1200, // Temporary send message failure. Please try again later (Messenger Send API errors)
  80007, // WhatsApp Business Account rate limit (WhatsApp throttling errors)
  130429, // Cloud API throughput reached (WhatsApp throttling errors)
  131000, // Something went wrong, 500 (WhatsApp errors)
  131016, // Service unavailable, 503 (WhatsApp errors)
  131056, // (Business, consumer) pair rate limit hit (WhatsApp throttling errors)
  131057, // Business account in maintenance mode (WhatsApp errors)
]);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Graph's `{error: {...}}` read into GraphErrorInfo; null when the body is not one. */
export function readGraphError(body: unknown): GraphErrorInfo | null {
  if (!body || typeof body !== 'object') return null;
  const e = (body as { error?: unknown }).error;
  if (!e || typeof e !== 'object') return null;
  const r = e as Record<string, unknown>;
  const data =
    r.error_data && typeof r.error_data === 'object' ? (r.error_data as Record<string, unknown>) : {};
  const details = str(data.details);
  return {
    code: num(r.code),
    subcode: num(r.error_subcode),
    type: str(r.type) ?? 'unknown',
    message: str(r.message) ?? '',
    fbtrace_id: str(r.fbtrace_id) ?? null,
    ...(details === undefined ? {} : { details }),
  };
}

/**
 * Decides transient or permanent for an answer Meta (or something in front of it) gave.
 * Status first where it is unambiguous (429, 5xx: try again), then Meta's code, then Graph's own
 * `is_transient` hint, which it sets on some temporary errors beside the code.
 */
export function isTransient(status: number, info: GraphErrorInfo | null, body: unknown): boolean {
  if (status === 429 || status >= 500) return true;
  if (info?.code != null && TRANSIENT_CODES.has(info.code)) return true;
  const hint = (body as { error?: { is_transient?: unknown } } | null)?.error?.is_transient;
  return hint === true;
}

/** The failure for a non-2xx answer. */
export function answeredFailure(status: number, body: unknown, rawText: string): GraphFailure {
  const info = readGraphError(body);
  return {
    ok: false,
    transient: isTransient(status, info, body),
    status,
    error: info ?? {
      code: null,
      subcode: null,
      type: 'http_error',
      // Not Graph's body (a proxy's or load balancer's page): a short excerpt is enough to see which.
      message: `HTTP ${status}: ${rawText.slice(0, 200)}`,
      fbtrace_id: null,
    },
  };
}

/** No answer at all: the request may or may not have reached Meta, so it is worth another try. */
export function unansweredFailure(kind: 'timeout' | 'network_error', message: string): GraphFailure {
  return {
    ok: false,
    transient: true,
    status: null,
    error: { code: null, subcode: null, type: kind, message, fbtrace_id: null },
  };
}

/**
 * Refused on our side, before or instead of a call (a disconnected account, a post that cannot be
 * sent as is): permanent, since the same request would be refused again.
 */
export function refusedHere(type: string, message: string): GraphFailure {
  return {
    ok: false,
    transient: false,
    status: null,
    error: { code: null, subcode: null, type, message, fbtrace_id: null },
  };
}
