import { hash, verify } from '@node-rs/bcrypt';

// Password hashing (bcrypt): how a secret is stored and checked. What a password must be (its
// length) is /auth/v1's rule, in src/auth/password.ts.

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
