import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { type CheckedMedia, checkMediaStream, readAll } from './media-stream.ts';
import type { MediaKind } from './media-type.ts';
import { isPublicAddress } from './net/public-address.ts';

// Downloads a media file from a URL a caller gave (a social post's media_urls), safe against the
// usual ways such a URL is abused (docs/storage.md, "Downloading media_urls"):
// - only https, except hosts on the allow list (MEDIA_FETCH_ALLOW_HOSTS: development, tests);
// - never to a private, loopback, link-local, CGNAT or metadata address: checked on the addresses
//   DNS gives, and the socket connects to exactly the address checked (the lookup below is the
//   connection's own), so a name that answers differently a second time (DNS rebinding) gains
//   nothing; checked again on every redirect, followed by hand, at most MAX_REDIRECTS;
// - the type from the first bytes (media-type.ts), never the URL or Content-Type; the size held
//   to the type's limit (and opts.maxBytes) while it streams, the download cut as soon as it passes;
// - one deadline for the whole of it, redirects, the body and a server that never answers included.
// Takes in a URL and limits; `openMedia` gives out the type and the body as a stream (read on into
// the store, never held whole), `fetchMedia` the bytes; refusals are MediaFetchErrors.

export const MAX_REDIRECTS = 5;

export type FetchedMedia = {
  bytes: Uint8Array;
  mimeType: string;
  kind: MediaKind;
  width?: number;
  height?: number;
  /** Where the bytes came from after redirects. */
  finalUrl: string;
};

export type MediaFetchOptions = {
  /** host or host:port entries that may be plain http and private (development and tests). */
  allowHosts: string[];
  timeoutMs: number;
  /** Overall cap in bytes, on top of the type's own limit. */
  maxBytes: number;
  /** Ends the download early: a post's other media failed, or its import's deadline passed. */
  signal?: AbortSignal;
};

/** A download under way: its type is known, its bytes flow through `stream` (checked as they go). */
export type MediaDownload = CheckedMedia & {
  /** Where the bytes come from after redirects. */
  finalUrl: string;
};

/** A download refused or failed: `reason` says why, for a person to read. */
export class MediaFetchError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`${url}: ${reason}`);
    this.name = 'MediaFetchError';
  }
}

/** Whether a URL's host is on the allow list: `host` matches any port, `host:port` that port. */
function isAllowedHost(url: URL, allowHosts: string[]): boolean {
  const host = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return allowHosts.some((entry) => {
    const e = entry.trim().toLowerCase();
    return e === host || e === `${host}:${port}`;
  });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The whole file in memory (small files, tests): `openMedia` read to its end. */
export async function fetchMedia(url: string, opts: MediaFetchOptions): Promise<FetchedMedia> {
  const media = await openMedia(url, opts);
  const bytes = await readAll(media.stream);
  const { width, height } = media.measured();
  return {
    bytes,
    mimeType: media.mimeType,
    kind: media.kind,
    ...(width !== undefined && height !== undefined ? { width, height } : {}),
    finalUrl: media.finalUrl,
  };
}

/**
 * The download, once its first bytes told its type: the stream fails with a MediaFetchError past
 * the type's limit or the deadline, which runs on while the caller reads it.
 */
export async function openMedia(url: string, opts: MediaFetchOptions): Promise<MediaDownload> {
  const own = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([own, opts.signal]) : own;
  let current = url;
  for (let hop = 0; ; hop++) {
    const target = checkedUrl(current, url, opts.allowHosts);
    const res = await request(target, url, opts, signal);
    if (REDIRECTS.has(res.statusCode ?? 0)) {
      res.destroy();
      const location = res.headers.location;
      if (!location) throw new MediaFetchError(url, `redirect (HTTP ${res.statusCode}) without a Location`);
      if (hop >= MAX_REDIRECTS) throw new MediaFetchError(url, `more than ${MAX_REDIRECTS} redirects`);
      current = new URL(location, target).toString();
      continue;
    }
    if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) {
      res.destroy();
      throw new MediaFetchError(url, `the server answered HTTP ${res.statusCode}`);
    }
    return { ...(await readMedia(res, url, opts, signal)), finalUrl: target.toString() };
  }
}

/** The URL if its scheme and host may be fetched at all (addresses are checked at connect). */
export function checkedUrl(text: string, original: string, allowHosts: string[]): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new MediaFetchError(original, `not a URL: ${text}`);
  }
  if (url.username || url.password)
    throw new MediaFetchError(original, 'URLs with credentials are not fetched');
  const allowed = isAllowedHost(url, allowHosts);
  if (url.protocol !== 'https:' && !(allowed && url.protocol === 'http:'))
    throw new MediaFetchError(original, `only https URLs are fetched (${url.protocol}//${url.host})`);
  // An address written in the URL is never looked up, so it is checked here.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowed && isIP(literal) && !isPublicAddress(literal))
    throw new MediaFetchError(original, `${url.host} is not a public internet address`);
  return url;
}

/**
 * The connection's own DNS lookup: every address the name has must be public, and the socket
 * connects to those checked (Node calls this instead of its resolver, with or without `all`).
 */
function publicOnlyLookup(original: string, allowed: boolean) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number | string },
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { all: true, family: Number(options.family) || 0 }, (err, addresses) => {
      if (err)
        return callback(new MediaFetchError(original, `${hostname} does not resolve (${err.code})`), []);
      const refused = allowed ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (refused)
        return callback(
          new MediaFetchError(
            original,
            `${hostname} resolves to ${refused.address}, not a public internet address`,
          ),
          [],
        );
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

function request(target: URL, original: string, opts: MediaFetchOptions, signal: AbortSignal) {
  return guardedGet(
    target,
    original,
    opts.allowHosts,
    { accept: 'image/*, video/*', 'user-agent': 'svc-media-fetch/1' },
    signal,
  ).catch((err) => {
    throw failure(err, original, opts.timeoutMs, signal);
  });
}

/**
 * A GET of a checked URL (checkedUrl) whose every resolved address must be public unless its host
 * is allowed, on a connection of its own, resolved with the answer's head (redirects not followed).
 */
export function guardedGet(
  target: URL,
  original: string,
  allowHosts: string[],
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const allowed = isAllowedHost(target, allowHosts);
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'GET',
      headers,
      lookup: publicOnlyLookup(original, allowed) as never,
      // A fresh connection per download: a pooled socket was checked for another name.
      agent: false,
      signal,
    });
    req.on('response', resolve);
    req.on('error', reject);
    req.end();
  });
}

const failure = (err: unknown, original: string, timeoutMs: number, signal: AbortSignal) => {
  if (err instanceof MediaFetchError) return err;
  if (signal.aborted) return new MediaFetchError(original, `no complete answer within ${timeoutMs} ms`);
  return new MediaFetchError(original, `the download failed (${(err as Error).message})`);
};

/** The body, typed by its first bytes and cut off as soon as it outgrows its limit. */
async function readMedia(
  res: http.IncomingMessage,
  original: string,
  opts: MediaFetchOptions,
  signal: AbortSignal,
): Promise<CheckedMedia> {
  const declared = Number(res.headers['content-length']);
  const tooLarge = (limit: number, kind?: MediaKind) =>
    new MediaFetchError(original, `larger than ${limit} bytes, the limit${kind ? ` for ${kind}s` : ''}`);
  if (Number.isFinite(declared) && declared > opts.maxBytes) {
    res.destroy();
    throw tooLarge(opts.maxBytes);
  }
  const media = await checkMediaStream(
    res,
    {
      unsupported: () => unsupported(original),
      tooLarge,
      failed: (err) => failure(err, original, opts.timeoutMs, signal),
    },
    opts.maxBytes,
  );
  // A declared size over the type's own limit is refused now, before the body is read on.
  if (Number.isFinite(declared) && declared > media.limit) {
    media.stream.destroy();
    res.destroy();
    throw tooLarge(media.limit, media.kind);
  }
  return media;
}

const unsupported = (original: string) =>
  new MediaFetchError(
    original,
    'the content is not a JPEG, PNG, GIF or WebP image, nor an MP4 or QuickTime video (judged by its bytes)',
  );
