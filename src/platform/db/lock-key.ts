import { createHash } from 'node:crypto';

/** A stable signed 64-bit advisory-lock key for a name (Postgres takes a bigint). */
export function advisoryKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}
