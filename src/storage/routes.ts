import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { z } from 'zod';
import { SOCIAL_MEDIA_BUCKET } from '../domain/media-bucket.ts';
import { checkObjectUrl, SIGNED_URL_PURPOSE, signObjectUrl } from '../domain/signed-url.ts';
import { requireSocialPlan } from '../domain/social-posts.ts';
import { fromZodIssues } from '../platform/errors.ts';
import { authenticate } from '../platform/http/authenticate.ts';
import { closeAfterResponse } from '../platform/http/connection.ts';
import type { AppEnv } from '../platform/http/env.ts';
import { meter } from '../platform/http/meter.ts';
import { MEDIA_KINDS } from '../platform/media-type.ts';
import {
  InvalidKeyError,
  type ObjectInfo,
  objectKey,
  type StoredObject,
} from '../platform/storage/object-store.ts';
import { toWebStream } from '../platform/storage/web-stream.ts';
import type { Services } from '../services.ts';
import { folderOf, inFolder } from './access.ts';
import {
  expiredSignature,
  invalidKey,
  invalidSignature,
  keyExists,
  noSuchBucket,
  noSuchKey,
  outsideOwnFolder,
} from './errors.ts';
import { readUpload } from './upload-body.ts';

// /storage/v1: the part of Supabase's storage API that @supabase/storage-js's file methods call
// (upload, update, download, list, remove, createSignedUrl), for the one bucket there is,
// `social-media`. Paths are `<organization id>/…`; a caller sees and writes its organization's
// folder only (access.ts), and another organization's objects answer as missing ones do.
// docs/storage.md.

const BUCKETS = new Set([SOCIAL_MEDIA_BUCKET]);
const PREFIX = '/storage/v1/object/';
const MAX_SIGNED_SECONDS = 365 * 24 * 3600;

type Target = { bucket: string; path: string; key: string };

/**
 * The bucket and object path after `/storage/v1/object/<route>`, read from the raw URL so an
 * encoded `/` or `%` in a name is the character it encodes (storage-js sends paths unencoded,
 * and fetch encodes what must be).
 */
function target(c: Context, route: string, opts: { folderOnly?: boolean } = {}): Target {
  const raw = new URL(c.req.url).pathname.slice(PREFIX.length + route.length);
  let segments: string[];
  try {
    segments = raw.split('/').map(decodeURIComponent);
  } catch {
    throw invalidKey('The object path is not valid percent-encoding');
  }
  const bucket = segments[0] ?? '';
  if (!BUCKETS.has(bucket)) throw noSuchBucket(bucket);
  const path = segments.slice(1).join('/');
  if (opts.folderOnly) return { bucket, path, key: bucket };
  return { bucket, path, key: checkedKey(bucket, path) };
}

/** How many objects a batch asks the store about at once. */
const HEADS_AT_ONCE = 16;

/** The store's key of a path, or null for a path that is not a valid key. */
function keyOrNull(bucket: string, path: string): string | null {
  try {
    return objectKey(`${bucket}/${path}`);
  } catch (err) {
    if (err instanceof InvalidKeyError) return null;
    throw err;
  }
}

function checkedKey(bucket: string, path: string): string {
  const key = keyOrNull(bucket, path);
  if (key === null) throw invalidKey(`Invalid key: ${path}`);
  return key;
}

async function jsonBody<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  const body = await c.req.json().catch(() => undefined);
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  return parsed.data;
}

/** A stable id per object key (storage-js shows `id`; the disk has no row to number). */
function objectId(key: string): string {
  const h = createHash('sha256').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((Number.parseInt(h[16] ?? '0', 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** An entry of a listing in Supabase's shape (FileObject): files with metadata, folders without. */
function fileObject(name: string, key: string, info: ObjectInfo | null) {
  if (!info)
    return { name, id: null, updated_at: null, created_at: null, last_accessed_at: null, metadata: null };
  const at = info.updatedAt.toISOString();
  return {
    name,
    id: objectId(key),
    updated_at: at,
    created_at: at,
    last_accessed_at: at,
    metadata: {
      size: info.size,
      mimetype: info.contentType,
      cacheControl: 'no-cache',
      lastModified: at,
      contentLength: info.size,
      httpStatusCode: 200,
    },
  };
}

/**
 * An object's bytes as a response, streamed from the store as the client reads them;
 * `download` (storage-js's option) makes it an attachment.
 */
function objectResponse(
  object: ObjectInfo & { body?: StoredObject['body'] },
  path: string,
  download: string | undefined,
  cacheControl: string,
) {
  const headers: Record<string, string> = {
    'content-type': object.contentType,
    'content-length': String(object.size),
    'last-modified': object.updatedAt.toUTCString(),
    'cache-control': cacheControl,
    // Only media types are ever stored, but a browser must never guess another one.
    'x-content-type-options': 'nosniff',
  };
  if (download !== undefined) {
    const name = download || path.split('/').at(-1) || 'download';
    headers['content-disposition'] =
      `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;
  }
  return new Response(object.body ? toWebStream(object.body) : null, { status: 200, headers });
}

/**
 * The object to answer with: its bytes for a GET, only what the store says of it for a HEAD
 * (Hono answers a HEAD with the GET's headers and drops the body unread, which would leave a file
 * open or an S3 connection held).
 */
function readObject(s: Services, c: Context, key: string) {
  return c.req.method === 'HEAD' ? s.storage.head(key) : s.storage.get(key);
}

const ListBody = z.object({
  prefix: z.string().max(1024).default(''),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
  search: z.string().max(1024).optional(),
});
const RemoveBody = z.object({ prefixes: z.array(z.string().min(1).max(1024)).min(1).max(1000) });
const SignBody = z.object({ expiresIn: z.coerce.number().int().min(1).max(MAX_SIGNED_SECONDS) });
const SignManyBody = SignBody.extend({ paths: z.array(z.string().min(1).max(1024)).min(1).max(1000) });
/** A path of a batch that is not signed: Supabase's words, the same whether it is missing or not the caller's. */
const NOT_SIGNED = 'Either the object does not exist or you do not have access to it';

/**
 * The one bucket as storage-js's listBuckets() and getBucket() read it: private, taking the media
 * of the social calendar up to the largest file (per-type limits are in svc://schema/social). It is
 * built in, not created, so its times are those of the release that brought it.
 */
const BUCKET_INFO = {
  id: SOCIAL_MEDIA_BUCKET,
  name: SOCIAL_MEDIA_BUCKET,
  owner: '',
  public: false,
  file_size_limit: Math.max(...Object.values(MEDIA_KINDS).map((k) => k.max_bytes)),
  allowed_mime_types: Object.values(MEDIA_KINDS).flatMap((k) => k.mime_types),
  created_at: '2026-11-20T00:00:00.000Z',
  updated_at: '2026-11-20T00:00:00.000Z',
};

export function storageRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const signedIn = [authenticate(s, { required: true }), meter(s)] as const;
  const signingKey = s.secrets.derive(SIGNED_URL_PURPOSE);

  async function upload(c: Context<AppEnv>, upsert: boolean) {
    const { bucket, path, key } = target(c, '');
    // New files are the social calendar's media, a paid module: on free, plan_required as the
    // social tools answer (checked first, as they check it). Reads and removals stay open, so an
    // organization that moved down to free still sees and deletes what it stored.
    await requireSocialPlan(s, c.get('principal'));
    const folder = await folderOf(s, c.get('principal'), 'write', 'Uploading media');
    // An object sits inside an organization's folder, never at the top where the folders are.
    if (!inFolder(folder, path) || !path.includes('/'))
      throw folder ? outsideOwnFolder(folder) : invalidKey(`Invalid key: ${path}`);
    if (!upsert && (await s.storage.head(key))) throw keyExists();
    // Typed by its first bytes before anything is stored; streamed into the store from there.
    const file = await readUpload(c);
    try {
      await s.storage.put(key, file.stream, file.mimeType);
    } catch (err) {
      // The store kept nothing; the rest of the body is not read (the connection closes after).
      file.stream.destroy();
      closeAfterResponse(c);
      if (err instanceof InvalidKeyError) throw invalidKey(err.message);
      throw file.failure() ?? err;
    }
    return c.json({ Id: objectId(key), Key: `${bucket}/${path}` }, 200);
  }
  app.post('/object/list/:bucket', ...signedIn, async (c) => {
    const { bucket } = target(c, 'list/', { folderOnly: true });
    const body = await jsonBody(c, ListBody);
    const folder = await folderOf(s, c.get('principal'), 'read', 'Listing media');
    const prefix = body.prefix.replace(/^\/+|\/+$/g, '');
    const page = { limit: body.limit, offset: body.offset, search: body.search };
    let listed: Awaited<ReturnType<typeof s.storage.list>>;
    if (prefix === '' && folder !== null) {
      // The bucket's top level, as this caller may see it: its own folder, once it holds anything.
      const any = await s.storage.list(`${bucket}/${folder}`, { limit: 1, offset: 0 });
      const own = any.length && (!page.search || folder.startsWith(page.search.toLowerCase()));
      listed =
        own && page.offset === 0
          ? [{ name: `${folder}/`, size: 0, contentType: '', updatedAt: new Date(0) }]
          : [];
    } else if (prefix !== '' && !inFolder(folder, `${prefix}/`)) {
      listed = []; // another organization's folder is empty to this caller, as under Supabase's policies
    } else {
      listed = await s.storage.list(prefix === '' ? bucket : checkedKey(bucket, prefix), page);
    }
    return c.json(
      listed.map((o) =>
        o.name.endsWith('/')
          ? fileObject(o.name.slice(0, -1), '', null)
          : fileObject(o.name, `${bucket}/${prefix}/${o.name}`, o),
      ),
      200,
    );
  });

  app.get('/bucket', ...signedIn, (c) => c.json([BUCKET_INFO], 200));
  app.get('/bucket/:id', ...signedIn, (c) => {
    if (c.req.param('id') !== SOCIAL_MEDIA_BUCKET) throw noSuchBucket(c.req.param('id'));
    return c.json(BUCKET_INFO, 200);
  });

  // createSignedUrls(): several paths at once, each signed or refused on its own. Registered first:
  // `sign/:bucket/*` below matches the bare bucket too.
  app.post('/object/sign/:bucket', ...signedIn, async (c) => {
    const { bucket } = target(c, 'sign/', { folderOnly: true });
    const { expiresIn, paths } = await jsonBody(c, SignManyBody);
    const folder = await folderOf(s, c.get('principal'), 'read', 'Signing media URLs');
    const expires = new Date(s.now().getTime() + expiresIn * 1000);
    const signed: { error: string | null; path: string; signedURL: string | null }[] = [];
    for (let i = 0; i < paths.length; i += HEADS_AT_ONCE) {
      const batch = paths.slice(i, i + HEADS_AT_ONCE).map(async (path) => {
        const key = inFolder(folder, path) ? keyOrNull(bucket, path) : null;
        if (!key || !(await s.storage.head(key))) return { error: NOT_SIGNED, path, signedURL: null };
        const token = signObjectUrl(signingKey, key, expires);
        return { error: null, path, signedURL: `/object/sign/${bucket}/${path}?token=${token}` };
      });
      signed.push(...(await Promise.all(batch)));
    }
    return c.json(signed, 200);
  });

  app.post('/object/sign/:bucket/*', ...signedIn, async (c) => {
    const { bucket, path, key } = target(c, 'sign/');
    const { expiresIn } = await jsonBody(c, SignBody);
    const folder = await folderOf(s, c.get('principal'), 'read', 'Signing a media URL');
    if (!inFolder(folder, path) || !(await s.storage.head(key))) throw noSuchKey();
    const token = signObjectUrl(signingKey, key, new Date(s.now().getTime() + expiresIn * 1000));
    // Unencoded, as Supabase answers: storage-js passes `${url}${signedURL}` through encodeURI.
    return c.json({ signedURL: `/object/sign/${bucket}/${path}?token=${token}` }, 200);
  });

  // A signed URL needs no bearer token: the token in it is the permission, for one object.
  app.get('/object/sign/:bucket/*', async (c) => {
    const { path, key } = target(c, 'sign/');
    const check = checkObjectUrl(signingKey, c.req.query('token') ?? '', key, s.now());
    if (check !== 'valid') throw check === 'expired' ? expiredSignature() : invalidSignature();
    const object = await readObject(s, c, key);
    if (!object) throw noSuchKey();
    return objectResponse(object, path, c.req.query('download'), 'private, max-age=300');
  });

  const download = (route: string) => async (c: Context<AppEnv>) => {
    const { path, key } = target(c, route);
    const folder = await folderOf(s, c.get('principal'), 'read', 'Downloading media');
    const object = inFolder(folder, path) ? await readObject(s, c, key) : null;
    if (!object) throw noSuchKey();
    return objectResponse(object, path, c.req.query('download'), 'private, no-cache');
  };
  app.get('/object/authenticated/:bucket/*', ...signedIn, download('authenticated/'));

  app.delete('/object/:bucket', ...signedIn, async (c) => {
    const { bucket } = target(c, '', { folderOnly: true });
    const { prefixes } = await jsonBody(c, RemoveBody);
    const folder = await folderOf(s, c.get('principal'), 'write', 'Removing media');
    // Paths outside the caller's folder are passed over, as Supabase's policies pass them over.
    const keys = prefixes
      .map((p) => p.replace(/^\/+/, ''))
      .filter((p) => inFolder(folder, p))
      .map((p) => checkedKey(bucket, p));
    const removed = await s.storage.remove(keys);
    return c.json(
      removed.map((k) => ({
        ...fileObject(k.slice(bucket.length + 1), k, null),
        id: objectId(k),
        bucket_id: bucket,
      })),
      200,
    );
  });

  app.post('/object/:bucket/*', ...signedIn, (c) => upload(c, c.req.header('x-upsert') === 'true'));
  // storage-js's update(): a replacement, so it may overwrite.
  app.put('/object/:bucket/*', ...signedIn, (c) => upload(c, true));
  app.get('/object/:bucket/*', ...signedIn, download(''));
  return app;
}
