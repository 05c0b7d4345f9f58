import { Readable } from 'node:stream';
import {
  imageSize,
  type MediaKind,
  type MediaType,
  maxBytesOf,
  SNIFF_BYTES,
  sniffMedia,
} from './media-type.ts';

// A media file arriving as a stream (an upload's body, a download, an object read back from the
// store), checked on the way through without holding it: its type from its first bytes, decided
// before the stream is handed on (so nothing is stored of a file that is no media), and its size
// held to that type's limit (and `maxBytes`) while it flows, the stream failing as soon as it
// passes. Takes in the bytes and the refusals to raise; gives out the type and a Readable of the
// same bytes, and, once that was read to its end, the size and an image's width and height.

/** An image's width and height are in its first bytes; this much of an image is kept to read them. */
export const IMAGE_HEADER_BYTES = 256 * 1024;

export type MediaRefusals = {
  /** The first bytes are no media type MEDIA_CONSTRAINTS allows. */
  unsupported(): Error;
  /** No bytes at all; unset: unsupported(). */
  empty?(): Error;
  /** Past `limit` bytes; `kind` once the type is known. */
  tooLarge(limit: number, kind?: MediaKind): Error;
  /** The source itself failed (a connection reset, a deadline): what to raise instead. */
  failed?(err: unknown): Error;
};

export type CheckedMedia = MediaType & {
  /** The bytes, the first ones included; fails with a refusal once past the limit. */
  stream: Readable;
  /** The limit the stream is held to: the type's, or `maxBytes` when lower. */
  limit: number;
  /** After `stream` ended: its size, and an image's width and height when its header tells them. */
  measured(): { size: number; width?: number; height?: number };
  /** The refusal (or failure) the stream ended with, if it did: the cause to report. */
  failure(): Error | undefined;
};

/**
 * Reads the first bytes of `source` and answers its type, or throws `refuse.unsupported()`;
 * the bytes go on through `stream`. `maxBytes` caps every type (a caller's own ceiling).
 */
export async function checkMediaStream(
  source: AsyncIterable<Uint8Array>,
  refuse: MediaRefusals,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<CheckedMedia> {
  const failed = (err: unknown) => (refuse.failed ? refuse.failed(err) : (err as Error));
  const iterator = source[Symbol.asyncIterator]();
  const first: Uint8Array[] = [];
  let size = 0;
  let ended = false;
  try {
    while (size < SNIFF_BYTES) {
      const { done, value } = await iterator.next();
      if (done) {
        ended = true;
        break;
      }
      first.push(value);
      size += value.length;
    }
  } catch (err) {
    throw failed(err);
  }
  const head = Buffer.concat(first);
  const type = size === 0 ? null : sniffMedia(head.subarray(0, SNIFF_BYTES));
  const limit = type ? Math.min(maxBytes, maxBytesOf(type.kind)) : maxBytes;
  if (!type || size > limit) {
    if (!ended) await iterator.return?.();
    if (size === 0 && refuse.empty) throw refuse.empty();
    throw type ? refuse.tooLarge(limit, type.kind) : refuse.unsupported();
  }
  // An image's header is kept to read its width and height at the end; a video's bytes are not.
  const header: Uint8Array[] = type.kind === 'image' ? [head] : [];
  let kept = type.kind === 'image' ? head.length : 0;
  let failure: Error | undefined;
  let total = 0;
  async function* checked(): AsyncGenerator<Uint8Array> {
    const pass = (chunk: Uint8Array) => {
      total += chunk.length;
      if (total > limit) throw refuse.tooLarge(limit, type?.kind);
      if (kept > 0 && kept < IMAGE_HEADER_BYTES) {
        header.push(Buffer.from(chunk.subarray(0, IMAGE_HEADER_BYTES - kept))); // a copy: not the whole chunk kept
        kept += Math.min(chunk.length, IMAGE_HEADER_BYTES - kept);
      }
      return chunk;
    };
    try {
      total = head.length; // the first bytes, read already and within the limit
      yield head;
      if (ended) return;
      for (;;) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await iterator.next();
        } catch (err) {
          throw failed(err);
        }
        if (next.done) return;
        yield pass(next.value);
      }
    } catch (err) {
      failure = err as Error;
      throw err;
    } finally {
      if (!ended) await iterator.return?.();
    }
  }
  return {
    ...type,
    limit,
    // objectMode false, small buffer: what is read ahead is one chunk, not the file.
    stream: Readable.from(checked(), { objectMode: false, highWaterMark: 64 * 1024 }),
    measured: () => ({
      size: total,
      ...(type.kind === 'image' ? imageSize(Buffer.concat(header), type.mimeType) : undefined),
    }),
    failure: () => failure,
  };
}

/** The whole of a stream, in memory: for small objects and tests, never for media on its way through. */
export async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return new Uint8Array(Buffer.concat(chunks));
}
