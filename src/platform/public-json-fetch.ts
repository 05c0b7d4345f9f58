import { checkedUrl, guardedGet, MediaFetchError } from './media-fetch.ts';

/**
 * A small JSON document from the internet (an OAuth client's metadata document), under the same
 * guard as media downloads: https only (plain http and private addresses only for `allowHosts`),
 * every address the name resolves to public, no redirects, a size cap and a deadline.
 */
export async function fetchPublicJson(
  url: string,
  opts: { allowHosts: string[]; timeoutMs: number; maxBytes: number },
): Promise<unknown> {
  const target = checkedUrl(url, url, opts.allowHosts);
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const headers = { accept: 'application/json', 'user-agent': 'svc-oauth-client-fetch/1' };
  const res = await guardedGet(target, url, opts.allowHosts, headers, signal).catch((err) => {
    throw err instanceof MediaFetchError
      ? err
      : new MediaFetchError(url, signal.aborted ? `no answer within ${opts.timeoutMs} ms` : err.message);
  });
  if (res.statusCode !== 200) {
    res.destroy();
    throw new MediaFetchError(url, `the server answered HTTP ${res.statusCode}`);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > opts.maxBytes) {
        res.destroy();
        reject(new MediaFetchError(url, `larger than ${opts.maxBytes} bytes`));
      } else chunks.push(chunk);
    });
    res.on('error', (err) => reject(new MediaFetchError(url, err.message)));
    res.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new MediaFetchError(url, 'not JSON'));
      }
    });
  });
}
