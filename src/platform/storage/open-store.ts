import { createDiskStore } from './disk-store.ts';
import type { ObjectStore } from './object-store.ts';

// The one place that picks the store of /storage/v1 (docs/storage.md): an S3-compatible bucket
// when STORAGE_URL is set, STORAGE_DIR on the local disk otherwise. Every process of a deployment
// (API processes, workers, `svc purge`) opens it here, so they agree on where the files are.

/** An S3 bucket (STORAGE_URL), an optional key prefix in it, and how to reach it. */
export type S3Location = {
  bucket: string;
  prefix: string;
  region: string;
  /** An S3-compatible service (MinIO, R2, a local server): then path-style addresses. */
  endpoint?: string;
  /** Unset: the AWS SDK's own chain (a role of the machine, a profile). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
};

export type StoreLocation = { dir: string; s3?: S3Location };

export async function openObjectStore(where: StoreLocation): Promise<ObjectStore> {
  if (!where.s3) return createDiskStore(where.dir);
  // The AWS SDK is loaded only for a bucket: a start on the disk store never reads its files.
  const { createS3Store } = await import('./s3-store.ts');
  const { bucket, prefix, region, endpoint, credentials } = where.s3;
  return createS3Store({
    bucket,
    prefix,
    region,
    ...(endpoint ? { endpoint } : {}),
    ...(credentials ? { credentials } : {}),
  });
}
