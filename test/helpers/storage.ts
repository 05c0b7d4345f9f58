import { randomUUID } from 'node:crypto';
import { parseStorageUrl } from '../../src/config.ts';
import { readAll } from '../../src/platform/media-stream.ts';
import type { ObjectStore } from '../../src/platform/storage/object-store.ts';
import { createS3Store } from '../../src/platform/storage/s3-store.ts';

// Which store the tests run on: the disk (each test service's own STORAGE_DIR) unless
// TEST_STORAGE_URL names an S3-compatible bucket (.ci/s3-server starts one for the PostgreSQL
// run). Each service and each store a test opens then gets a prefix of its own in that bucket,
// so test files running side by side never see each other's objects.

export const TEST_STORAGE_URL = process.env.TEST_STORAGE_URL || undefined;
/** The local server takes any credentials; a real bucket would take the environment's. */
const CREDENTIALS = {
  AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'test',
  AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'test',
};

/** The environment a test service gets for its store: nothing on disk, STORAGE_URL on S3. */
export function storageEnv(): Record<string, string> {
  if (!TEST_STORAGE_URL) return {};
  const url = new URL(TEST_STORAGE_URL);
  url.pathname = `/test-${randomUUID()}`;
  return { STORAGE_URL: url.toString(), ...CREDENTIALS };
}

/** A fresh S3 store under a prefix of its own, or null when the run is on the disk. */
export function testS3Store(): ReturnType<typeof createS3Store> | null {
  if (!TEST_STORAGE_URL) return null;
  const where = parseStorageUrl(TEST_STORAGE_URL);
  return createS3Store({
    ...where,
    prefix: `test-${randomUUID()}`,
    credentials: {
      accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID,
      secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY,
    },
  });
}

/** An object's bytes and what the store says of it (small test objects only). */
export async function readObject(store: ObjectStore, key: string) {
  const object = await store.get(key);
  if (!object) return null;
  const { body, ...info } = object;
  return { ...info, bytes: await readAll(body) };
}
