import { hash, verify } from '@node-rs/bcrypt';

// Password hashing (bcrypt): how a secret is stored and checked. What a password must be (its
// length) is /auth/v1's rule, in src/auth/password.ts.

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
