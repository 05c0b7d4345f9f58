import { ApiError, must } from '../../lib/api';
import { supabase } from '../../lib/supabase';

// Files from the computer reach a post as media_urls (docs/social.md "Media"): each is uploaded into
// the organization's folder of the social-media bucket and its signed URL handed over. A URL of the
// service's own bucket is copied from the store, not downloaded (src/storage/own-object.ts), into
// the post's own file under <org>/posts/, so the upload is removed once the post is written (or refused).

const bucket = () => supabase.storage.from('social-media');

export type Staged = { paths: string[]; urls: string[] };

const extension = (f: File) => /\.([a-z0-9]{1,5})$/i.exec(f.name)?.[1]?.toLowerCase() ?? 'bin';

export async function stageFiles(organizationId: string, files: File[]): Promise<Staged> {
  const staged: Staged = { paths: [], urls: [] };
  try {
    for (const file of files) {
      const path = `${organizationId}/uploads/${crypto.randomUUID()}.${extension(file)}`;
      const up = await bucket().upload(path, file, { contentType: file.type || undefined });
      if (up.error) throw new ApiError(`${file.name}: ${up.error.message}`);
      staged.paths.push(path);
      // Short-lived: it only has to name the file for the write that follows.
      staged.urls.push(must(await bucket().createSignedUrl(path, 600)).signedUrl);
    }
    return staged;
  } catch (err) {
    await unstage(staged);
    throw err;
  }
}

/** Removes uploads the post no longer needs; a failure here loses nothing the person made. */
export async function unstage(staged: Staged) {
  if (staged.paths.length) await bucket().remove(staged.paths);
}
