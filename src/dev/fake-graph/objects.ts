// What the fake Graph keeps of each thing made on it (posts, photos, videos, Instagram containers
// and media): publishing.ts makes them, reads.ts and listing.ts answer on them.

type Json = Record<string, unknown>;
type Kind = 'post' | 'photo' | 'video' | 'container' | 'media';
export type FakeObject = {
  id: string;
  kind: Kind;
  owner: string;
  /** Visible on the account (a post, a published photo or video, Instagram media). */
  published: boolean;
  text: string | null;
  created_time: string;
  permalink: string | null;
  body: Json;
  /** Containers: status reads left before FINISHED, and how they end. */
  container?: {
    polls: number;
    end: 'FINISHED' | 'ERROR' | 'EXPIRED';
    published: boolean;
    carouselItem: boolean;
  };
};
