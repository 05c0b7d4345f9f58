import http from 'node:http';
import https from 'node:https';
import { checkedUrl, isAllowedHost, MediaFetchError, publicOnlyLookup } from './media-fetch.ts';

/**
 * A small JSON document from the internet (an OAuth client's metadata document), under the same
 * guard as media downloads: https only (plain http and private addresses only for `allowHosts`),
 * every address the name resolves to public, no redirects, a size cap and a deadline.
 */
export function fetchPublicJson(
  url: string,
  opts: { allowHosts: string[]; timeoutMs: number; maxBytes: number },
): Promise<unknown> {
  const target = checkedUrl(url, url, opts.allowHosts);
  const allowed = isAllowedHost(target, opts.allowHosts);
  const signal = AbortSignal.timeout(opts.timeoutMs);
  return new Promise((resolve, reject) => {
    const req = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'svc-oauth-client-fetch/1' },
      lookup: publicOnlyLookup(url, allowed) as never,
      agent: false,
      signal,
    });
    req.on('error', (err) =>
      reject(
        err instanceof MediaFetchError
          ? err
          : new MediaFetchError(url, signal.aborted ? `no answer within ${opts.timeoutMs} ms` : err.message),
      ),
    );
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.destroy();
        return reject(new MediaFetchError(url, `the server answered HTTP ${res.statusCode}`));
      }
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
    req.end();
  });
}
