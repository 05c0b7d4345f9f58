// The fake's publishing side, the POSTs: Facebook Page posts (/feed, /photos, /videos) and Instagram
// content publishing (/media containers that are IN_PROGRESS for a few polls, /media_publish). It
// keeps what was made per account, so a test can prove a post went out once; reads.ts answers the
// GETs on it (fields, container status, the paged listings, Insights). Development and tests only.
import { randomInt } from 'node:crypto';
import { type Fault, graphError, invalidParameter } from './faults.ts';
import type { FakeObject } from './objects.ts';
import { createReads } from './reads.ts';

type Json = Record<string, unknown>;
const digits = (n: number) =>
  Array.from({ length: n }, (_, i) => (i === 0 ? randomInt(1, 10) : randomInt(0, 10))).join('');
/** Graph's time format: 2026-11-24T06:00:00+0000. */
const graphTime = (d: Date) => `${d.toISOString().slice(0, 19)}+0000`;
const isHttpUrl = (v: unknown) => typeof v === 'string' && /^https?:\/\//.test(v) && URL.canParse(v);
const ok = (body: unknown): Fault => ({ status: 200, body });
const bad = (details: string) => invalidParameter('messenger', details);

export type PublishingOptions = {
  /** Status reads a top-level Instagram container answers IN_PROGRESS before it is FINISHED (default 1). */
  containerPolls?: number;
};

export function createPublishing(options: PublishingOptions = {}) {
  const objects = new Map<string, FakeObject>();
  let endings: ('ERROR' | 'EXPIRED')[] = [];
  const reads = createReads(objects);

  const add = (o: Omit<FakeObject, 'created_time' | 'permalink'> & { permalink?: string | null }) => {
    const obj: FakeObject = { permalink: null, ...o, created_time: graphTime(new Date()) };
    objects.set(obj.id, obj);
    return obj;
  };
  const post = (owner: string, body: Json, text: string | null) => {
    const id = `${owner}_${digits(16)}`;
    return add({
      id,
      kind: 'post',
      owner,
      published: true,
      text,
      body,
      permalink: `https://www.facebook.com/${owner}/posts/${id.split('_')[1]}`,
    });
  };

  /** Published Instagram media, made from a container's body. */
  const media = (owner: string, body: Json) => {
    const id = digits(17);
    return add({
      id,
      kind: 'media',
      owner,
      published: true,
      text: (body.caption as string) ?? null,
      body,
      permalink: `https://www.instagram.com/p/${Buffer.from(id).toString('base64url').slice(0, 11)}/`,
    });
  };

  /** POST /{page-id}/{feed|photos|videos}, /{ig-user-id}/{media|media_publish}. */
  function create(owner: string, channel: 'messenger' | 'instagram', edge: string, b: Json): Fault {
    if (channel === 'messenger') {
      if (edge === 'feed') {
        const attached = b.attached_media;
        if (b.message === undefined && b.link === undefined && attached === undefined)
          return bad('param message, link or attached_media is required.');
        if (b.link !== undefined && !isHttpUrl(b.link)) return bad('param link must be a valid URL.');
        if (attached !== undefined) {
          if (!Array.isArray(attached) || attached.length === 0)
            return bad('param attached_media must be a list.');
          for (const a of attached as Json[]) {
            const photo = objects.get(String(a?.media_fbid));
            if (photo?.kind !== 'photo' || photo.owner !== owner || photo.published)
              return bad('param attached_media must name unpublished photos of this Page (media_fbid).');
          }
          for (const a of attached as Json[])
            (objects.get(String(a.media_fbid)) as FakeObject).body.attached = true;
        }
        return ok({ id: post(owner, b, (b.message as string) ?? null).id });
      }
      if (edge === 'photos') {
        if (!isHttpUrl(b.url)) return bad('param url must be an http(s) URL of an image (or send source).');
        const published = b.published !== false && b.published !== 'false';
        const photo = add({ id: digits(16), kind: 'photo', owner, published: false, text: null, body: b });
        if (!published) return ok({ id: photo.id });
        const p = post(owner, b, (b.message as string) ?? null);
        return ok({ id: photo.id, post_id: p.id });
      }
      if (edge === 'videos') {
        if (!isHttpUrl(b.file_url)) return bad('param file_url must be an http(s) URL of a video.');
        const id = digits(16);
        add({
          id,
          kind: 'video',
          owner,
          published: true,
          text: (b.description as string) ?? null,
          body: b,
          permalink: `https://www.facebook.com/${owner}/videos/${id}/`,
        });
        return ok({ id });
      }
    }
    if (channel === 'instagram') {
      if (edge === 'media') return container(owner, b);
      if (edge === 'media_publish') {
        const c = objects.get(String(b.creation_id));
        if (c?.kind !== 'container' || c.owner !== owner || c.container?.carouselItem)
          return bad('param creation_id must be a media container of this account.');
        if (c.container?.published)
          return graphError(
            400,
            100,
            '(#100) The media container has already been published.',
            'OAuthException',
          );
        if (c.container?.polls !== 0 || c.container.end !== 'FINISHED')
          return graphError(400, 9007, 'Media ID is not available', 'OAuthException', 2207027);
        c.container.published = true;
        return ok({ id: media(owner, c.body).id });
      }
    }
    return graphError(400, 2500, `Unknown path components: /${edge}`, 'OAuthException');
  }

  function container(owner: string, b: Json): Fault {
    const type = b.media_type as string | undefined;
    const item = b.is_carousel_item === true || b.is_carousel_item === 'true';
    if (typeof b.caption === 'string' && b.caption.length > 2200)
      return bad('param caption is longer than 2200 characters.');
    if (item && b.caption !== undefined) return bad('A carousel item takes no caption.');
    if (type === 'CAROUSEL') {
      const children = typeof b.children === 'string' ? b.children.split(',') : [];
      if (children.length < 2 || children.length > 10)
        return bad('param children must list 2 to 10 containers.');
      for (const id of children) {
        const c = objects.get(id);
        if (!c || c.owner !== owner || !c.container?.carouselItem)
          return bad(`param children: ${id} is not a carousel item container of this account.`);
      }
    } else if (b.image_url !== undefined) {
      if (!isHttpUrl(b.image_url) || (type !== undefined && type !== 'IMAGE' && type !== 'STORIES'))
        return bad('param image_url must be an http(s) URL (media_type IMAGE or none).');
    } else if (b.video_url !== undefined) {
      if (!isHttpUrl(b.video_url)) return bad('param video_url must be an http(s) URL.');
      // VIDEO is only for carousel items now; a feed video is a reel.
      if (!(type === 'REELS' || type === 'STORIES' || (type === 'VIDEO' && item)))
        return bad('param media_type must be REELS for a video (VIDEO only inside a carousel).');
    } else return bad('param image_url or video_url is required.');
    const id = digits(17);
    const top = !item;
    add({
      id,
      kind: 'container',
      owner,
      published: false,
      text: (b.caption as string) ?? null,
      body: b,
      container: {
        polls: top ? (options.containerPolls ?? 1) : 0,
        end: (top && endings.shift()) || 'FINISHED',
        published: false,
        carouselItem: item,
      },
    });
    return ok({ id });
  }

  return {
    create,
    read: reads.read,
    /** Who owns an object id (a post, photo, container): whose token reads it. */
    ownerOf: (id: string) => objects.get(id)?.owner ?? null,
    /** A post or media someone else made on the account (server.ts `postElsewhere`). */
    elsewhere(owner: string, channel: 'messenger' | 'instagram', text: string): FakeObject {
      if (channel === 'messenger') return post(owner, { message: text }, text);
      return media(owner, { caption: text });
    },
    /** What people can see on the account, oldest first. */
    published: (account: string) => [...objects.values()].filter((o) => o.owner === account && o.published),
    /** The next `n` top-level Instagram containers end in this state instead of FINISHED. */
    failContainers(n: number, end: 'ERROR' | 'EXPIRED') {
      for (let i = 0; i < n; i++) endings.push(end);
    },
    setInsights: reads.setInsights,
    reset() {
      objects.clear();
      endings = [];
      reads.reset();
    },
  };
}

export type Publishing = ReturnType<typeof createPublishing>;
