import { createHash } from 'node:crypto';

/**
 * The id of the job of `name` enqueued with `key`: a UUID (version 8: custom) that only this name
 * and key give. migrations/0029_job_sweep.sql computes the same in SQL (`app.job_key_id`), so the
 * sweep finds a row's job by primary key; test/platform/queue-sweep.test.ts pins the two together.
 */
export function keyedId(name: string, key: string): string {
  const h = createHash('sha256').update(`${name}\0${key}`).digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x80;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
