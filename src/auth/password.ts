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

export async function createPasswords(cost: number): Promise<Passwords> {
  const dummy = await hash('not-a-real-password', cost);
  return {
    hash: (password) => hash(password, cost),
    async verify(password, stored) {
      const ok = await verify(password, stored ?? dummy);
      return ok && stored !== undefined;
    },
  };
}
