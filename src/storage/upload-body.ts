import type { Context } from 'hono';
import { MEDIA_CONSTRAINTS } from '../domain/social.ts';
import { closeAfterResponse } from '../platform/http/connection.ts';
import {
  MAX_MEDIA_BYTES,
  type MediaType,
  maxBytesOf,
  SNIFF_BYTES,
  sniffMedia,
} from '../platform/media-type.ts';
import { entityTooLarge, invalidMimeType, noContent } from './errors.ts';

// The file of an upload as @supabase/storage-js sends it: the raw body (ArrayBuffer, Buffer,
// stream; `upload(path, bytes, {contentType})`) or multipart/form-data whose file part storage-js
// names '' (Blob, File, FormData). Its type is judged by its first bytes (media-type.ts), never
// the Content-Type sent, and it is held to that type's limit while it streams in.

/** Room for multipart framing and the cacheControl/metadata fields around the file. */
const MULTIPART_OVERHEAD = 1024 * 1024;
const ALLOWED = Object.values(MEDIA_CONSTRAINTS.types).flatMap((t) => [...t.mime_types]);

export type Upload = { bytes: Uint8Array; type: MediaType };

export async function readUpload(c: Context): Promise<Upload> {
  const body = c.req.raw.body;
  if (!body) throw noContent();
  const contentType = c.req.header('content-type') ?? '';
  try {
    if (/^multipart\/form-data/i.test(contentType)) {
      // formData() reads the whole body: it is capped first, so a chunked one cannot grow unbounded.
      const limit = MAX_MEDIA_BYTES + MULTIPART_OVERHEAD;
      const capped = cap(body, limit);
      const form = await new Response(capped.stream, { headers: { 'content-type': contentType } })
        .formData()
        .catch((err) => {
          throw capped.exceeded() ? entityTooLarge(limit) : noContent(err);
        });
      let file: Blob | undefined;
      form.forEach((value) => {
        if (!file && typeof value !== 'string') file = value;
      });
      if (!file) throw noContent();
      return typed(new Uint8Array(await (file as Blob).arrayBuffer()));
    }
    return await readRaw(body);
  } catch (err) {
    closeAfterResponse(c);
    throw err;
  }
}

/** A file checked whole: some type, within that type's limit. */
function typed(bytes: Uint8Array): Upload {
  if (bytes.length === 0) throw noContent();
  const type = sniffMedia(bytes.subarray(0, SNIFF_BYTES));
  if (!type) throw invalidMimeType(ALLOWED);
  if (bytes.length > maxBytesOf(type.kind)) throw entityTooLarge(maxBytesOf(type.kind), type.kind);
  return { bytes, type };
}

/** The raw body, refused as soon as its first bytes are no media or it passes its type's limit. */
async function readRaw(body: ReadableStream<Uint8Array>): Promise<Upload> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let type: MediaType | null = null;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
      if (!type && size >= SNIFF_BYTES) {
        type = sniffMedia(Buffer.concat(chunks).subarray(0, SNIFF_BYTES));
        if (!type) throw invalidMimeType(ALLOWED);
      }
      const limit = type ? maxBytesOf(type.kind) : MAX_MEDIA_BYTES;
      if (size > limit) throw entityTooLarge(limit, type?.kind);
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = Buffer.concat(chunks);
  return typed(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
}

/** `stream`, failing once more than `limit` bytes went through (`exceeded()` then says so). */
function cap(stream: ReadableStream<Uint8Array>, limit: number) {
  let size = 0;
  const capped = stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.length;
        if (size > limit) controller.error(entityTooLarge(limit));
        else controller.enqueue(chunk);
      },
    }),
  );
  return { stream: capped, exceeded: () => size > limit };
}
