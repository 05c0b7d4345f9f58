import { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Context } from 'hono';
import { MEDIA_CONSTRAINTS } from '../domain/social.ts';
import { closeAfterResponse } from '../platform/http/connection.ts';
import { type CheckedMedia, checkMediaStream } from '../platform/media-stream.ts';
import { entityTooLarge, invalidMimeType, noContent } from './errors.ts';

// The file of an upload as @supabase/storage-js sends it: the raw body (ArrayBuffer, Buffer,
// stream; `upload(path, bytes, {contentType})`) or multipart/form-data whose file part storage-js
// names '' (Blob, File, FormData). Either way it streams: a multipart body is parsed as it
// arrives (busboy) and its first file part handed on, never the whole body held. Its type is
// judged by its first bytes (media-type.ts), never the Content-Type sent, before anything is
// stored, and it is held to that type's limit while it streams into the store
// (platform/media-stream.ts): 413 as soon as it passes, 415 from its first bytes.

const ALLOWED = Object.values(MEDIA_CONSTRAINTS.types).flatMap((t) => [...t.mime_types]);

/** Form fields beside the file (storage-js sends cacheControl, maybe metadata): few and small. */
const FORM_LIMITS = { files: 1, fields: 20, parts: 40, fieldSize: 64 * 1024, headerPairs: 50 };

const REFUSALS = {
  unsupported: () => invalidMimeType(ALLOWED),
  empty: () => noContent(),
  tooLarge: (limit: number, kind?: string) => entityTooLarge(limit, kind),
};

/**
 * The upload's file, typed and on its way: read `stream` into the store. A refusal found before
 * (no file, no media) is thrown here; one found later (too large, cut off) fails the stream, and
 * `failure()` names it. Either way the connection is closed after the answer: the rest of the
 * body is not read.
 */
export async function readUpload(c: Context): Promise<CheckedMedia> {
  const body = c.req.raw.body;
  try {
    if (!body) throw noContent();
    const raw = Readable.fromWeb(body as never, { highWaterMark: 64 * 1024 }) as Readable;
    const contentType = c.req.header('content-type') ?? '';
    const multipart = /^multipart\/form-data/i.test(contentType);
    const file = multipart ? await filePart(raw, contentType) : raw;
    const media = await checkMediaStream(file, REFUSALS);
    // A raw body that says it is larger than its type allows is refused now, not once it passed.
    const declared = Number(c.req.header('content-length'));
    if (!multipart && Number.isFinite(declared) && declared > media.limit) {
      media.stream.destroy();
      throw entityTooLarge(media.limit, media.kind);
    }
    return media;
  } catch (err) {
    closeAfterResponse(c);
    throw err;
  }
}

/** The first file part of a multipart body, as it streams; 400 when the body has none or is no form. */
function filePart(body: Readable, contentType: string): Promise<Readable> {
  return new Promise((resolve, reject) => {
    let form: busboy.Busboy;
    try {
      form = busboy({ headers: { 'content-type': contentType }, limits: FORM_LIMITS });
    } catch (err) {
      body.destroy();
      reject(noContent(err));
      return;
    }
    let found = false;
    form.on('file', (_name, file) => {
      found = true;
      resolve(file);
    });
    form.on('error', (err) => {
      body.destroy();
      if (!found) reject(noContent(err));
    });
    form.on('close', () => {
      if (!found) reject(noContent(new Error('no file part')));
    });
    body.on('error', (err) => form.destroy(err));
    body.pipe(form);
  });
}
