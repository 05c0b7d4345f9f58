// Where a link from a mail may send the browser: GoTrue's rule. The site URL (and anything on its
// origin) and the configured allow list; anything else falls back to the site URL, so a link
// cannot be turned into a redirector that hands a session to someone else's page.

/** Entries are exact URLs (query and fragment ignored) or prefixes ending in `*`. */
export function allowedRedirect(wanted: string | undefined, siteUrl: string, allowList: string[]): string {
  if (!wanted) return siteUrl;
  let url: URL;
  try {
    url = new URL(wanted);
  } catch {
    return siteUrl;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return siteUrl;
  if (url.origin === new URL(siteUrl).origin) return url.toString();
  const bare = `${url.origin}${url.pathname}`;
  for (const entry of allowList) {
    if (entry.endsWith('*') ? url.toString().startsWith(entry.slice(0, -1)) : sameAddress(bare, entry))
      return url.toString();
  }
  return siteUrl;
}

function sameAddress(bare: string, entry: string): boolean {
  try {
    const e = new URL(entry);
    return bare === `${e.origin}${e.pathname}`;
  } catch {
    return false;
  }
}

/** `url` with `params` as its fragment, as GoTrue's implicit flow hands a session to a page. */
export function withFragment(url: string, params: Record<string, string | number>): string {
  const u = new URL(url);
  u.hash = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  return u.toString();
}
