import { Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ListedObject, ObjectInfo, ObjectStore } from './object-store.ts';
import { objectKey } from './object-store.ts';

// The ObjectStore on an S3-compatible service (AWS S3, MinIO, R2, …), with the official
// @aws-sdk/client-s3. Keys are the store's keys (`<bucket>/<path>`) inside one S3 bucket, under
// an optional prefix. A put streams through @aws-sdk/lib-storage's Upload: parts of PART_BYTES,
// at most QUEUE_PARTS in flight, so an upload holds about (QUEUE_PARTS + 1) × PART_BYTES whatever
// the file's size; a body of one part or less is one PutObject. A body that fails on its way
// (too large, cut off) aborts the multipart upload: no object, no parts left to pay for. Reads
// stream the GetObject body. S3 has no folders: a listing with a `/` delimiter shows them, as the
// disk store's does, and S3 keeps `a` and `a/b` side by side where a disk cannot.

/** S3's smallest part is 5 MiB (all but the last); 8 MiB keeps a 1 GB video to 128 parts. */
export const PART_BYTES = 8 * 1024 * 1024;
/** Parts sent at once: two keeps the upload flowing while one part waits for its answer. */
export const QUEUE_PARTS = 2;
/** Connections to the store at once, per process. */
const MAX_SOCKETS = 512;
/** HeadObject calls at once when a removal or a listing needs them. */
const HEADS_AT_ONCE = 16;

export type S3StoreOptions = {
  bucket: string;
  region: string;
  /** An S3-compatible service's address; unset: AWS's own endpoints for the region. */
  endpoint?: string;
  /** Put before every key (`svc/` for `svc/social-media/…`); '' for none. */
  prefix?: string;
  /** Unset: the SDK's default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profiles, roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Built by the caller instead (tests watch its commands); `region`… are then unused. */
  client?: S3Client;
};

/** A missing object: GetObject names it NoSuchKey; HeadObject has no body, only its 404. */
const missing = (err: unknown) =>
  (err as { name?: string }).name === 'NoSuchKey' ||
  (err as { name?: string }).name === 'NotFound' ||
  ((err as { name?: string }).name === 'Unknown' &&
    (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404);

export function createS3Store(opts: S3StoreOptions): ObjectStore & { client: S3Client } {
  const client =
    opts.client ??
    new S3Client({
      region: opts.region,
      ...(opts.endpoint ? { endpoint: opts.endpoint, forcePathStyle: true } : {}),
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      // A download holds its connection while the client reads: room for many slow clients (the
      // SDK's default is 50 a process, and the 51st download would wait for one to finish).
      requestHandler: { httpAgent: { maxSockets: MAX_SOCKETS }, httpsAgent: { maxSockets: MAX_SOCKETS } },
      // Checksums only when S3 requires them: some S3-compatible services reject the newer ones.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  const Bucket = opts.bucket;
  const prefix = opts.prefix ? `${opts.prefix.replace(/\/+$/, '')}/` : '';
  const s3Key = (key: string) => `${prefix}${objectKey(key)}`;

  /** What a HEAD or GET of an object says about it. */
  const infoOf = (out: {
    ContentType?: string;
    ContentLength?: number;
    LastModified?: Date;
  }): ObjectInfo => ({
    contentType: out.ContentType ?? 'application/octet-stream',
    size: out.ContentLength ?? 0,
    updatedAt: out.LastModified ?? new Date(0),
  });

  async function head(key: string): Promise<ObjectInfo | null> {
    try {
      return infoOf(await client.send(new HeadObjectCommand({ Bucket, Key: s3Key(key) })));
    } catch (err) {
      if (missing(err)) return null;
      throw err;
    }
  }

  /** `f` over `items`, at most HEADS_AT_ONCE at a time, results in order. */
  async function inBatches<T, R>(items: T[], f: (item: T) => Promise<R>): Promise<R[]> {
    const out: R[] = [];
    for (let i = 0; i < items.length; i += HEADS_AT_ONCE)
      out.push(...(await Promise.all(items.slice(i, i + HEADS_AT_ONCE).map(f))));
    return out;
  }

  return {
    client,

    async put(key, body, contentType) {
      const Key = s3Key(key);
      let size = 0;
      const counted =
        body instanceof Uint8Array
          ? body
          : Readable.from(
              (async function* () {
                for await (const chunk of body as Readable) {
                  size += chunk.length;
                  yield chunk as Uint8Array;
                }
              })(),
              { objectMode: false, highWaterMark: 64 * 1024 },
            );
      const upload = new Upload({
        client,
        params: { Bucket, Key, Body: counted as never, ContentType: contentType },
        partSize: PART_BYTES,
        queueSize: QUEUE_PARTS,
        leavePartsOnError: false, // a failed body aborts the multipart upload
      });
      await upload.done();
      return body instanceof Uint8Array ? body.length : size;
    },

    async get(key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: s3Key(key) }));
        return { body: out.Body as Readable, ...infoOf(out) };
      } catch (err) {
        if (missing(err)) return null;
        throw err;
      }
    },

    head,

    async remove(keys) {
      // S3 answers every key of a DeleteObjects as deleted, present or not: the heads say which were.
      const unique = [...new Set(keys)];
      const present = (await inBatches(unique, async (k) => ((await head(k)) ? k : null))).filter(
        (k): k is string => k !== null,
      );
      for (let i = 0; i < present.length; i += 1000) {
        const batch = present.slice(i, i + 1000);
        const out = await client.send(
          new DeleteObjectsCommand({
            Bucket,
            Delete: { Objects: batch.map((k) => ({ Key: s3Key(k) })), Quiet: true },
          }),
        );
        if (out.Errors?.length)
          throw new Error(`S3 did not delete ${out.Errors.map((e) => `${e.Key}: ${e.Code}`).join(', ')}`);
      }
      return present;
    },

    async list(folder, { limit, offset, search }) {
      // The folder's entries by name, walked page by page: `search` is case-insensitive (as
      // Supabase's), which S3's Prefix is not, so the names are filtered here.
      const base = folder === '' ? prefix : `${s3Key(folder)}/`;
      const wanted = search?.toLowerCase();
      const page: { name: string; key?: string }[] = [];
      let skip = offset;
      let token: string | undefined;
      do {
        const out: ListObjectsV2CommandOutput = await client.send(
          new ListObjectsV2Command({ Bucket, Prefix: base, Delimiter: '/', ContinuationToken: token }),
        );
        const entries = [
          ...(out.CommonPrefixes ?? []).map((p) => ({ name: (p.Prefix ?? '').slice(base.length) })),
          ...(out.Contents ?? []).map((o) => ({ name: (o.Key ?? '').slice(base.length), key: o.Key })),
        ]
          .filter((e) => e.name !== '' && (!wanted || e.name.toLowerCase().startsWith(wanted)))
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        for (const e of entries) {
          if (skip > 0) skip--;
          else if (page.length < limit) page.push(e);
        }
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token && page.length < limit);
      const listed = await inBatches(page, async (e): Promise<ListedObject | null> => {
        if (!e.key) return { name: e.name, size: 0, contentType: '', updatedAt: new Date(0) };
        // Removed since the page was read: left out, as if listed a moment later.
        const info = await head(e.key.slice(prefix.length));
        return info && { name: e.name, ...info };
      });
      return listed.filter((o): o is ListedObject => o !== null);
    },
  };
}
