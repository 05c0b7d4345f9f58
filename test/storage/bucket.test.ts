import { readdirSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { StorageApiError, StorageClient } from '@supabase/storage-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signObjectUrl } from '../../src/domain/signed-url.ts';
import { gif, html, jpeg, mp4, png, webp } from '../fakes/media/samples.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// The social-media bucket as the dashboard reaches it, through the official
// @supabase/storage-js client: upload, list, download, signed URLs, remove; each organization
// sees its own folder only (another's objects are missing, its folder empty, writes refused);
// types by content and per-type limits; agents by scope; uploads need a plan with the social
// calendar (starter), while a free organization still reads and removes what it has.

let svc: TestService;
let alice: Session;
let bob: Session;
let aliceOrg: string;
let bobOrg: string;

const storageAs = (token: string) =>
  new StorageClient(`${svc.url}/storage/v1`, { apikey: svc.anonKey, Authorization: `Bearer ${token}` });
const bucketOf = (token: string) => storageAs(token).from('social-media');

beforeAll(async () => {
  svc = await startTestService();
  alice = await signUp(svc, 'Alice Bakery');
  bob = await signUp(svc, 'Bob Bikes');
  aliceOrg = orgOf(alice);
  bobOrg = orgOf(bob);
  // Uploading is the social calendar's, a starter feature; the last test covers free.
  await setPlan(svc, alice, 'starter');
  await setPlan(svc, bob, 'starter');
});
afterAll(() => svc?.stop());

const bytesOf = async (blob: Blob) => new Uint8Array(await blob.arrayBuffer());

describe('the social-media bucket through @supabase/storage-js', () => {
  it('uploads, lists, downloads and removes a file in the organization folder', async () => {
    const bucket = bucketOf(alice.access_token);
    const file = png(100, 50);
    const up = await bucket.upload(`${aliceOrg}/posts/cake.png`, file, { contentType: 'image/png' });
    expect(up.error).toBeNull();
    expect(up.data).toMatchObject({
      path: `${aliceOrg}/posts/cake.png`,
      fullPath: `social-media/${aliceOrg}/posts/cake.png`,
    });

    const top = await bucket.list();
    expect(top.error).toBeNull();
    expect(top.data?.map((o) => [o.name, o.id])).toEqual([[aliceOrg, null]]);
    const listed = await bucket.list(aliceOrg);
    expect(listed.data?.map((o) => o.name)).toEqual(['posts']);
    const files = await bucket.list(`${aliceOrg}/posts`);
    expect(files.data).toHaveLength(1);
    expect(files.data?.[0]).toMatchObject({
      name: 'cake.png',
      metadata: { size: file.length, mimetype: 'image/png' },
    });
    expect(files.data?.[0]?.id).toMatch(/^[0-9a-f-]{36}$/);

    const down = await bucket.download(`${aliceOrg}/posts/cake.png`);
    expect(down.error).toBeNull();
    expect(down.data?.type).toBe('image/png');
    expect(Buffer.from(await bytesOf(down.data as Blob)).equals(Buffer.from(file))).toBe(true);

    const removed = await bucket.remove([`${aliceOrg}/posts/cake.png`]);
    expect(removed.error).toBeNull();
    expect(removed.data?.map((o) => o.name)).toEqual([`${aliceOrg}/posts/cake.png`]);
    expect((await bucket.list(`${aliceOrg}/posts`)).data).toEqual([]);
    const gone = await bucket.download(`${aliceOrg}/posts/cake.png`);
    expect(gone.error).toBeInstanceOf(StorageApiError);
    expect(gone.error).toMatchObject({ status: 404, code: 'NoSuchKey' });
  });

  it('stores each media type as its bytes say, whatever the name or Content-Type claimed', async () => {
    const bucket = bucketOf(alice.access_token);
    const files: [string, Uint8Array, string][] = [
      ['a.jpg', jpeg(), 'image/jpeg'],
      ['a.gif', gif(), 'image/gif'],
      ['a.webp', webp(), 'image/webp'],
      ['a.mp4', mp4(), 'video/mp4'],
      ['really-a-png.jpg', png(), 'image/png'],
    ];
    for (const [name, bytes] of files) {
      const r = await bucket.upload(`${aliceOrg}/types/${name}`, bytes, { contentType: 'image/jpeg' });
      expect(r.error).toBeNull();
    }
    const listed = await bucket.list(`${aliceOrg}/types`);
    expect(Object.fromEntries(listed.data?.map((o) => [o.name, o.metadata?.mimetype]) ?? [])).toEqual(
      Object.fromEntries(files.map(([name, , type]) => [name, type])),
    );
  });

  it('takes multipart uploads (a Blob) as the browser sends them', async () => {
    const bucket = bucketOf(alice.access_token);
    const r = await bucket.upload(`${aliceOrg}/blob.gif`, new Blob([gif(7, 9)], { type: 'image/gif' }));
    expect(r.error).toBeNull();
    const down = await bucket.download(`${aliceOrg}/blob.gif`);
    expect(down.data?.type).toBe('image/gif');
    expect((await bytesOf(down.data as Blob)).length).toBe(gif(7, 9).length);
  });

  it('refuses content that is no supported media, and files over their type limit', async () => {
    const bucket = bucketOf(alice.access_token);
    const page = await bucket.upload(`${aliceOrg}/page.png`, html(), { contentType: 'image/png' });
    expect(page.error).toMatchObject({ status: 415, code: 'InvalidMimeType' });
    const huge = new Uint8Array(10 * 1024 * 1024 + 1);
    huge.set(png().subarray(0, 64));
    const big = await bucket.upload(`${aliceOrg}/huge.png`, huge, { contentType: 'image/png' });
    expect(big.error).toMatchObject({ status: 413, code: 'EntityTooLarge' });
    expect((await bucket.list(aliceOrg, { search: 'page' })).data).toEqual([]);
    expect((await bucket.list(aliceOrg, { search: 'huge' })).data).toEqual([]);
  });

  it('streams a video larger than one store part in and out byte for byte, raw or as a form', async () => {
    const bucket = bucketOf(alice.access_token);
    // Over 8 MiB: a multipart upload on S3 (src/platform/storage/s3-store.ts), three parts as a form.
    const video = mp4(9 * 1024 * 1024 + 1234);
    video.forEach((_, i) => {
      if (i >= 64) video[i] = i % 253;
    });
    expect((await bucket.upload(`${aliceOrg}/long.mp4`, video)).error).toBeNull();
    expect((await bucket.upload(`${aliceOrg}/form.mp4`, new Blob([video]))).error).toBeNull();
    for (const name of ['long.mp4', 'form.mp4']) {
      const res = await fetch(`${svc.url}/storage/v1/object/authenticated/social-media/${aliceOrg}/${name}`, {
        headers: { authorization: `Bearer ${alice.access_token}` },
      });
      expect(res.headers.get('content-type')).toBe('video/mp4');
      expect(res.headers.get('content-length')).toBe(String(video.length));
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(video))).toBe(true);
    }
    await bucket.remove([`${aliceOrg}/long.mp4`, `${aliceOrg}/form.mp4`]);
  });

  it('answers a HEAD with the size and type only, leaving no file open behind it', async () => {
    const bucket = bucketOf(alice.access_token);
    const file = png(8, 8, 5000);
    expect((await bucket.upload(`${aliceOrg}/head.png`, file)).error).toBeNull();
    for (let i = 0; i < 5; i++) {
      const res = await fetch(
        `${svc.url}/storage/v1/object/authenticated/social-media/${aliceOrg}/head.png`,
        {
          method: 'HEAD',
          headers: { authorization: `Bearer ${alice.access_token}` },
        },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe(String(file.length));
      expect(res.headers.get('content-type')).toBe('image/png');
    }
    // On the disk, the service (this process) holds no descriptor of the file once answered.
    const openOnIt = readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).endsWith(`${aliceOrg}/head.png`);
      } catch {
        return false;
      }
    });
    expect(openOnIt).toEqual([]);
    await bucket.remove([`${aliceOrg}/head.png`]);
  });

  it('tells the type from first bytes that arrive a few at a time, and refuses a page so sent', async () => {
    // A body streamed in small chunks, the signature split across them: judged once 16 bytes came.
    const trickle = (bytes: Uint8Array) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += at < 32 ? 3 : 1024)
            controller.enqueue(bytes.slice(at, at + (at < 32 ? 3 : 1024)));
          controller.close();
        },
      });
    const put = (name: string, bytes: Uint8Array) =>
      fetch(`${svc.url}/storage/v1/object/social-media/${aliceOrg}/${name}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${alice.access_token}`,
          'content-type': 'application/octet-stream',
        },
        body: trickle(bytes),
        duplex: 'half',
      } as RequestInit);
    expect((await put('trickle.jpg', png(4, 4))).status).toBe(200);
    expect((await bucketOf(alice.access_token).download(`${aliceOrg}/trickle.jpg`)).data?.type).toBe(
      'image/png',
    );
    const page = await put('trickle.gif', html());
    expect(page.status).toBe(415);
    expect(await page.json()).toMatchObject({ code: 'InvalidMimeType' });
    await bucketOf(alice.access_token).remove([`${aliceOrg}/trickle.jpg`]);
  });

  it('answers 413 once an upload passes its limit, or says it will, without waiting for the rest', async () => {
    // The body is never ended: an answer that waited for it would never come.
    const unfinished = (headers: Record<string, string>, bytes: Uint8Array) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `${svc.url}/storage/v1/object/social-media/${aliceOrg}/endless.png`,
          {
            method: 'POST',
            headers: {
              authorization: `Bearer ${alice.access_token}`,
              'content-type': 'image/png',
              ...headers,
            },
          },
          (res) => {
            let body = '';
            res.on('data', (d) => {
              body += d;
            });
            res.on('end', () => {
              req.destroy();
              resolve({ status: res.statusCode ?? 0, body });
            });
          },
        );
        req.on('error', reject);
        req.write(bytes);
      });
    const head = png(2, 2, 64 * 1024);
    const declared = await unfinished({ 'content-length': String(50 * 1024 * 1024) }, head);
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({
      code: 'EntityTooLarge',
      details: { limit_bytes: 10485760 },
    });
    const past = new Uint8Array(10 * 1024 * 1024 + 64 * 1024);
    past.set(head);
    const chunked = await unfinished({}, past);
    expect(chunked.status).toBe(413);
    expect(await bucketOf(alice.access_token).list(aliceOrg, { search: 'endless' })).toMatchObject({
      data: [],
    });
  });

  it('keeps the stored file when a replacement passes its limit on the way', async () => {
    const bucket = bucketOf(alice.access_token);
    const path = `${aliceOrg}/kept.gif`;
    const first = gif(3, 3);
    expect((await bucket.upload(path, first)).error).toBeNull();
    const huge = new Uint8Array(10 * 1024 * 1024 + 1);
    huge.set(png().subarray(0, 64));
    const refused = await bucket.upload(path, huge, { upsert: true });
    expect(refused.error).toMatchObject({ status: 413, code: 'EntityTooLarge' });
    // The old bytes and the old type: nothing of the refused file was kept, not even its type.
    const down = await bucket.download(path);
    expect(down.data?.type).toBe('image/gif');
    expect(Buffer.from(await bytesOf(down.data as Blob)).equals(Buffer.from(first))).toBe(true);
    await bucket.remove([path]);
  });

  it('refuses to overwrite without upsert, and replaces with it', async () => {
    const bucket = bucketOf(alice.access_token);
    const path = `${aliceOrg}/same.png`;
    expect((await bucket.upload(path, png(1, 1))).error).toBeNull();
    expect((await bucket.upload(path, png(2, 2))).error).toMatchObject({
      status: 409,
      code: 'KeyAlreadyExists',
    });
    expect((await bucket.upload(path, jpeg(), { upsert: true })).error).toBeNull();
    expect((await bucket.download(path)).data?.type).toBe('image/jpeg');
  });

  it('signs several URLs at once (createSignedUrls): each of the caller’s objects downloads, others’ and missing ones are refused one by one', async () => {
    const bucket = bucketOf(alice.access_token);
    const mine = [`${aliceOrg}/batch/a.png`, `${aliceOrg}/batch/b c.gif`];
    for (const [i, path] of mine.entries())
      expect((await bucket.upload(path, i ? gif(3, 3) : png(4, 4))).error).toBeNull();
    // Another organization's object that exists (Bob's folder stays empty for the test below).
    const carol = await signUp(svc, 'Carol Cakes');
    await setPlan(svc, carol, 'starter');
    const theirs = `${orgOf(carol)}/batch/theirs.png`;
    expect((await bucketOf(carol.access_token).upload(theirs, png(5, 5))).error).toBeNull();
    const asked = [...mine, `${aliceOrg}/batch/missing.png`, theirs, `${aliceOrg}/../x.png`];
    const { data, error } = await bucket.createSignedUrls(asked, 60);
    expect(error).toBeNull();
    expect(data?.map((d) => [d.path, d.error])).toEqual([
      [mine[0], null],
      [mine[1], null],
      ...asked.slice(2).map((p) => [p, 'Either the object does not exist or you do not have access to it']),
    ]);
    expect(data?.slice(2).every((d) => d.signedUrl === null)).toBe(true);
    const types = await Promise.all(
      (data ?? [])
        .slice(0, 2)
        .map(async (d) => (await fetch(d.signedUrl as string)).headers.get('content-type')),
    );
    expect(types).toEqual(['image/png', 'image/gif']);
    // The batch has the same bounds as one: a year at most, and at most 1,000 paths.
    expect((await bucket.createSignedUrls(mine, 400 * 24 * 3600)).error).not.toBeNull();
    expect((await bucket.createSignedUrls(Array(1001).fill(mine[0]), 60)).error).not.toBeNull();
  });

  it('describes its one bucket to listBuckets() and getBucket(), and no other', async () => {
    const storage = storageAs(alice.access_token);
    const listed = await storage.listBuckets();
    expect(listed.error).toBeNull();
    expect(listed.data?.map((b) => [b.id, b.public])).toEqual([['social-media', false]]);
    const one = await storage.getBucket('social-media');
    expect(one.data).toMatchObject({
      id: 'social-media',
      name: 'social-media',
      public: false,
      file_size_limit: 1024 * 1024 * 1024,
      allowed_mime_types: expect.arrayContaining(['image/png', 'video/mp4']),
    });
    const other = await storage.getBucket('avatars');
    expect(other.data).toBeNull();
    expect((other.error as StorageApiError | null)?.status).toBe(404);
    // Signed-in callers only.
    expect((await fetch(`${svc.url}/storage/v1/bucket`, { headers: { apikey: svc.anonKey } })).status).toBe(
      401,
    );
  });

  it('signs a URL that downloads without a token, and refuses it expired or forged', async () => {
    const bucket = bucketOf(alice.access_token);
    const path = `${aliceOrg}/signed/photo one.webp`;
    const file = webp(10, 10);
    expect((await bucket.upload(path, file)).error).toBeNull();
    const signed = await bucket.createSignedUrl(path, 60);
    expect(signed.error).toBeNull();
    const url = signed.data?.signedUrl as string;
    expect(url.startsWith(`${svc.url}/storage/v1/object/sign/social-media/`)).toBe(true);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(file))).toBe(true);

    const asDownload = await bucket.createSignedUrl(path, 60, { download: 'mine.webp' });
    const attachment = await fetch(asDownload.data?.signedUrl as string);
    expect(attachment.headers.get('content-disposition')).toMatch(/attachment; filename="mine.webp"/);

    const token = new URL(url).searchParams.get('token') as string;
    const [body, sig] = token.split('.') as [string, string];
    const forgedSig = `${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`;
    const forged = await fetch(url.replace(token, `${body}.${forgedSig}`));
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({
      error: 'unauthorized',
      code: 'InvalidSignature',
      statusCode: '401',
    });

    // A token for another object does not open this one.
    const other = await bucket.createSignedUrl(`${aliceOrg}/same.png`, 60);
    const otherToken = new URL(other.data?.signedUrl as string).searchParams.get('token') as string;
    expect((await fetch(url.replace(token, otherToken))).status).toBe(401);

    // Signed with the service's own key, but already expired.
    const key = svc.services.secrets.derive('storage-signed-url');
    const expired = signObjectUrl(key, `social-media/${path}`, new Date(Date.now() - 1000));
    const late = await fetch(url.replace(token, expired));
    expect(late.status).toBe(401);
    expect(await late.json()).toMatchObject({ error: 'token_expired', code: 'ExpiredToken' });
    expect((await fetch(url.replace(/token=.*/, 'token='))).status).toBe(401);
  });

  it('accepts a signed URL only in the base64url spelling it was issued in', async () => {
    const path = `${aliceOrg}/signed/spelling.png`;
    expect((await bucketOf(alice.access_token).upload(path, png(4, 4))).error).toBeNull();
    // A signature with both `-` and `_`, so that each rewrite below changes the text.
    const key = svc.services.secrets.derive('storage-signed-url');
    let token = '';
    for (let s = 60; !/-.*_|_.*-/.test(token.split('.')[1] ?? ''); s++)
      token = signObjectUrl(key, `social-media/${path}`, new Date(Date.now() + s * 1000));
    const url = (t: string) =>
      `${svc.url}/storage/v1/object/sign/social-media/${path}?token=${encodeURIComponent(t)}`;
    expect((await fetch(url(token))).status).toBe(200);

    const [body, sig] = token.split('.') as [string, string];
    // 32 bytes are 43 characters: the last carries 2 spare bits, which a lenient decoder ignores.
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const spare = last[last.indexOf(sig.at(-1) as string) ^ 1] as string;
    const respelled = [
      `${body}.${sig.replaceAll('-', '+')}`,
      `${body}.${sig.replaceAll('_', '/')}`,
      `${body}.${sig.replaceAll('-', '+').replaceAll('_', '/')}=`,
      `${body}.${sig}=`,
      `${body}.${sig.slice(0, -1)}${spare}`,
    ];
    for (const t of respelled) {
      const res = await fetch(url(t));
      expect(res.status, t).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'unauthorized', code: 'InvalidSignature' });
    }
  });

  it("never shows another organization's objects: missing to read, empty to list, refused to write", async () => {
    const path = `${aliceOrg}/private/plan.png`;
    expect((await bucketOf(alice.access_token).upload(path, png())).error).toBeNull();
    const asBob = bucketOf(bob.access_token);

    expect((await asBob.download(path)).error).toMatchObject({ status: 404, code: 'NoSuchKey' });
    const auth = await call(svc, 'GET', `/storage/v1/object/authenticated/social-media/${path}`, {
      token: bob.access_token,
    });
    expect(auth.status).toBe(404);
    expect((await asBob.createSignedUrl(path, 60)).error).toMatchObject({ status: 404, code: 'NoSuchKey' });
    expect((await asBob.list(aliceOrg)).data).toEqual([]);
    expect((await asBob.list(`${aliceOrg}/private`)).data).toEqual([]);
    expect((await asBob.list()).data).toEqual([]); // Bob's folder is still empty

    const write = await asBob.upload(`${aliceOrg}/private/evil.png`, png());
    expect(write.error).toMatchObject({ status: 403, code: 'AccessDenied' });
    const overwrite = await asBob.upload(path, png(), { upsert: true });
    expect(overwrite.error).toMatchObject({ status: 403 });
    expect((await asBob.remove([path])).data).toEqual([]);
    expect((await bucketOf(alice.access_token).download(path)).error).toBeNull();

    // Bob's own folder works, and Alice sees nothing of it.
    expect((await asBob.upload(`${bobOrg}/bike.png`, png())).error).toBeNull();
    expect((await bucketOf(alice.access_token).list(bobOrg)).data).toEqual([]);
  });

  it('refuses files at the top level, other buckets, traversal and requests without a token', async () => {
    const bucket = bucketOf(alice.access_token);
    expect((await bucket.upload('loose.png', png())).error).toMatchObject({
      status: 403,
      code: 'AccessDenied',
    });
    const other = await storageAs(alice.access_token).from('avatars').upload(`${aliceOrg}/a.png`, png());
    expect(other.error).toMatchObject({ status: 404, code: 'NoSuchBucket' });
    const traversal = await call(
      svc,
      'GET',
      `/storage/v1/object/social-media/${aliceOrg}/..%2F${bobOrg}/bike.png`,
      {
        token: alice.access_token,
      },
    );
    expect(traversal.status).toBe(400);
    expect(traversal.json).toMatchObject({ code: 'InvalidKey' });
    const anonymous = await call(svc, 'GET', `/storage/v1/object/social-media/${aliceOrg}/same.png`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toMatchObject({ error: 'unauthorized', statusCode: '401', code: 'InvalidJWT' });
  });

  it('lets a read agent download and list but not upload or remove; a write agent uploads', async () => {
    const reader = await agentToken(svc, alice, ['read']);
    const asReader = bucketOf(reader.token);
    expect((await asReader.download(`${aliceOrg}/same.png`)).error).toBeNull();
    expect((await asReader.list(aliceOrg)).error).toBeNull();
    const up = await asReader.upload(`${aliceOrg}/agent.png`, png());
    expect(up.error).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(up.error?.message).toMatch(/needs the write scope/);
    expect((await asReader.remove([`${aliceOrg}/same.png`])).error).toMatchObject({ status: 403 });

    const writer = await agentToken(svc, alice, ['write']);
    expect((await bucketOf(writer.token).upload(`${aliceOrg}/agent.png`, png())).error).toBeNull();
    expect((await bucketOf(writer.token).list(bobOrg)).data).toEqual([]);
  });

  it('refuses uploads on free with plan_required and stores nothing; a downgraded organization still reads and removes', async () => {
    const carol = await signUp(svc, 'Carol Candles');
    const carolOrg = orgOf(carol);
    const bucket = bucketOf(carol.access_token);
    const up = await bucket.upload(`${carolOrg}/posts/candle.png`, png());
    expect(up.error).toBeInstanceOf(StorageApiError);
    expect(up.error).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(up.error?.message).toMatch(/needs the starter plan/);
    // The body behind storage-js's error: the social tools' plan_required, with storage's fields.
    const raw = await fetch(`${svc.url}/storage/v1/object/social-media/${carolOrg}/posts/candle.png`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${carol.access_token}`, 'content-type': 'image/png' },
      body: png(),
    });
    expect(raw.status).toBe(403);
    expect(await raw.json()).toMatchObject({
      error: 'plan_required',
      minimum_plan: 'starter',
      details: { plan: 'free' },
      statusCode: '403',
      code: 'AccessDenied',
    });
    expect((await bucket.list(`${carolOrg}/posts`)).data).toEqual([]);
    expect(await svc.services.storage.head(`social-media/${carolOrg}/posts/candle.png`)).toBeNull();

    // Files stored on starter stay reachable after a move down to free: read, sign and remove.
    await setPlan(svc, carol, 'starter');
    expect((await bucket.upload(`${carolOrg}/posts/kept.png`, png(4, 4))).error).toBeNull();
    await setPlan(svc, carol, 'free');
    expect((await bucket.upload(`${carolOrg}/posts/more.png`, png())).error).toMatchObject({ status: 403 });
    expect((await bucket.download(`${carolOrg}/posts/kept.png`)).error).toBeNull();
    expect((await bucket.list(`${carolOrg}/posts`)).data?.map((o) => o.name)).toEqual(['kept.png']);
    expect((await bucket.createSignedUrl(`${carolOrg}/posts/kept.png`, 60)).error).toBeNull();
    expect((await bucket.remove([`${carolOrg}/posts/kept.png`])).data).toHaveLength(1);
    expect((await bucket.list(`${carolOrg}/posts`)).data).toEqual([]);
  });
});
