import { weakPassword } from './errors.ts';

// What /auth/v1 asks of a password; how one is hashed and checked is src/platform/passwords.ts.

/** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently truncated. */
export const MAX_PASSWORD_BYTES = 72;
export const MIN_PASSWORD_LENGTH = 8;

/** GoTrue's answer to a short password (auth-js turns it into AuthWeakPasswordError). */
export function assertLongEnough(password: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw weakPassword(`Password should be at least ${MIN_PASSWORD_LENGTH} characters.`);
  }
}
