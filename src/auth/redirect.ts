// Where a link from a mail may send the browser: GoTrue's rule. The site URL (and anything on its
// origin) and the configured allow list; anything else falls back to the site URL, so a link
// cannot be turned into a redirector that hands a session to someone else's page.

/**
 * Entries are exact URLs (query and fragment ignored) or prefixes ending in `/*` (checked at start,
 * src/config.ts). Both sides are parsed, never compared as text: a prefix matches only a URL on the
 * same origin whose path starts with the entry's path, so `http://localhost:3000/*` admits neither
 * `http://localhost:3000@evil.io/` (whose host is evil.io) nor `…3000.evil.io`. A URL carrying a
 * user name or password is refused outright: browsers drop or mangle them, and they only serve to
 * make a foreign address look like ours.
 */
export function allowedRedirect(wanted: string | undefined, siteUrl: string, allowList: string[]): string {
  if (!wanted) return siteUrl;
  let url: URL;
  try {
    url = new URL(wanted);
  } catch {
    return siteUrl;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return siteUrl;
  if (url.username || url.password) return siteUrl;
  if (url.origin === new URL(siteUrl).origin) return url.toString();
  for (const entry of allowList) if (matches(url, entry)) return url.toString();
  return siteUrl;
}

function matches(url: URL, entry: string): boolean {
  const prefix = entry.endsWith('*');
  let e: URL;
  try {
    e = new URL(prefix ? entry.slice(0, -1) : entry);
  } catch {
    return false;
  }
  if (url.origin !== e.origin) return false;
  return prefix ? url.pathname.startsWith(e.pathname) : url.pathname === e.pathname;
}

/** `url` with `params` as its fragment, as GoTrue's implicit flow hands a session to a page. */
export function withFragment(url: string, params: Record<string, string | number>): string {
  const u = new URL(url);
  u.hash = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  return u.toString();
}
