// Shared by the publisher tests (test/social/publisher*.test.ts): a service whose Graph API is the
// fake, one organization with a Facebook Page and an Instagram account connected, and scheduling a
// post on the service path exactly as the social functions do (row, media, job in one transaction).
import { enqueuePublish } from '../../src/domain/social-publish.ts';
import { type FakeGraph, type FakeGraphOptions, startFakeGraph } from '../fakes/graph/index.ts';
import { orgOf, type Session, signUp } from './http.ts';
import { setPlan } from './mcp.ts';
import { connect } from './send.ts';
import { startTestService, type TestService } from './service.ts';

export const PAGE = `10${process.pid}01`;
export const IG = `178${process.pid}02`;
const PAGE_TOKEN = 'EAAG-page-token-for-publisher-tests';
const IG_TOKEN = 'IGAA-ig-token-for-publisher-tests';

export const SOCIAL_ENV = {
  WORKER_POLL_MS: '500',
  WORKER_SUPERVISE_SECONDS: '1',
  META_GRAPH_TIMEOUT_MS: '3000',
  SOCIAL_PUBLISH_BACKOFF_SECONDS: '1',
  SOCIAL_CONTAINER_POLL_MS: '50',
  SOCIAL_CONTAINER_POLLS: '20',
  SOCIAL_METRICS_INTERVAL_SECONDS: '2',
};

/** Where the fake "storage" serves files: Meta only needs a URL it could fetch. */
export const mediaUrl = (path: string, expires: number) =>
  `https://media.example.test/storage/v1/object/sign/social-media/${path}?token=t${expires}`;

export type SocialWorld = {
  graph: FakeGraph;
  svc: TestService;
  owner: Session;
  org: string;
  facebook: string;
  instagram: string;
  stop(): Promise<void>;
};

/** `fake`: more options for the fake Graph API (`onRequest`, to act at an exact request). */
export async function socialWorld(
  env: Record<string, string> = {},
  fake: Pick<FakeGraphOptions, 'onRequest'> = {},
): Promise<SocialWorld> {
  const graph = await startFakeGraph({
    accounts: {
      [PAGE]: { token: PAGE_TOKEN, channel: 'messenger' },
      [IG]: { token: IG_TOKEN, channel: 'instagram' },
    },
    containerPolls: 2,
    ...fake,
  });
  const svc = await startTestService(
    { ...SOCIAL_ENV, META_GRAPH_URL: graph.url, META_INSTAGRAM_GRAPH_URL: graph.url, ...env },
    { mediaUrl },
  );
  const owner = await signUp(svc, 'Publisher');
  await setPlan(svc, owner, 'starter');
  const facebook = (await connect(svc, owner, 'facebook', PAGE, PAGE_TOKEN)).id;
  const instagram = (await connect(svc, owner, 'instagram', IG, IG_TOKEN)).id;
  return {
    graph,
    svc,
    owner,
    org: orgOf(owner),
    facebook,
    instagram,
    async stop() {
      await svc.stop();
      await graph.close();
    },
  };
}

export type Draft = {
  message?: string;
  link?: string;
  media?: { path: string; mime: string }[];
  /** Seconds from now (default 1). */
  inSeconds?: number;
};

/** A scheduled post with its media and its job, committed together; its id and schedule. */
export async function schedule(w: SocialWorld, platform: 'facebook' | 'instagram', d: Draft) {
  return w.svc.services.db.transaction(async (tx) => {
    const [p] = await tx.query<{ id: string; scheduled_at: string }>(
      `insert into public.social_posts (organization_id, platform, account_id, status, message, link, scheduled_at)
       values ($1, $2, $3, 'scheduled', $4, $5, now() + make_interval(secs => $6))
       returning id, scheduled_at::text`,
      [
        w.org,
        platform,
        platform === 'facebook' ? w.facebook : w.instagram,
        d.message ?? null,
        d.link ?? null,
        d.inSeconds ?? 1,
      ],
    );
    const post = p as { id: string; scheduled_at: string };
    for (const [i, m] of (d.media ?? []).entries())
      await tx.query(
        `insert into public.social_post_media (organization_id, post_id, position, storage_path, mime_type, bytes)
         values ($1, $2, $3, $4, $5, 1000)`,
        [w.org, post.id, i + 1, m.path, m.mime],
      );
    await enqueuePublish(tx, w.svc.services.queue, {
      organization_id: w.org,
      post_id: post.id,
      scheduled_at: post.scheduled_at,
    });
    return post;
  });
}

export type PostState = {
  status: string;
  provider_post_id: string | null;
  permalink: string | null;
  published_at: Date | null;
  scheduled_at: Date | null;
  error: Record<string, unknown> | null;
  message: string | null;
};

export async function postState(w: SocialWorld, id: string): Promise<PostState> {
  const [row] = await w.svc.services.db.query<PostState>(
    `select status, provider_post_id, permalink, published_at, scheduled_at, error, message
       from public.social_posts where organization_id = $1 and id = $2`,
    [w.org, id],
  );
  return row as PostState;
}

/** Waits (polling, generous ceiling) until the post leaves scheduled/publishing; its final state. */
export async function settled(w: SocialWorld, id: string, ms = 45_000): Promise<PostState> {
  const end = Date.now() + ms;
  for (;;) {
    const s = await postState(w, id);
    if (s.status === 'published' || s.status === 'failed') return s;
    if (Date.now() > end) throw new Error(`post ${id} still ${s.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The fake's requests to one edge (`feed`, `photos`, `media`, …) of one account. */
export const requestsTo = (graph: FakeGraph, id: string, edge: string) =>
  graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/${id}/${edge}`));
