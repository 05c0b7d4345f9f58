import { hash, verify } from '@node-rs/bcrypt';
import { weakPassword } from './errors.ts';

/** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently truncated. */
export const MAX_PASSWORD_BYTES = 72;
export const MIN_PASSWORD_LENGTH = 8;

/** GoTrue's answer to a short password (auth-js turns it into AuthWeakPasswordError). */
export function assertLongEnough(password: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw weakPassword(`Password should be at least ${MIN_PASSWORD_LENGTH} characters.`);
  }
}

export type Passwords = {
  hash(password: string): Promise<string>;
  /** Verifies against the stored hash, or against a dummy so an unknown email costs the same time. */
  verify(password: string, stored: string | undefined): Promise<boolean>;
};

export function createPasswords(cost: number): Passwords {
  // Hashed on libuv's thread pool while the service goes on starting (at cost 10, 60 to 150 ms of
  // the start otherwise: docs/performance.md, issue 29); only a verify that needs it waits for it.
  const dummy = hash('not-a-real-password', cost);
  dummy.catch(() => {}); // a failure is the first verify's, not an unhandled rejection at start
  return {
    hash: (password) => hash(password, cost),
    async verify(password, stored) {
      const ok = await verify(password, stored ?? (await dummy));
      return ok && stored !== undefined;
    },
  };
}
