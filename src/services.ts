import type { Tokens } from './auth/jwt.ts';
import type { Passwords } from './auth/password.ts';
import type { SessionDeps } from './auth/session.ts';
import type { SigningKeys } from './auth/signing-keys.ts';
import type { Config } from './config.ts';
import type { Database } from './platform/db/database.ts';
import type { Logger } from './platform/log.ts';
import { type Limiter, memoryLimiter } from './platform/rate-limit.ts';

export type Limits = {
  loginPerIp: Limiter;
  loginFailuresPerEmail: Limiter;
  signupPerIp: Limiter;
};

/** Everything a route needs, built once in main.ts and passed down as an argument. */
export type Services = {
  config: Config;
  publicUrl: string;
  db: Database;
  keys: SigningKeys;
  tokens: Tokens;
  passwords: Passwords;
  /** What issuing a session needs: the signer and the access-token lifetime. */
  sessions: SessionDeps;
  limits: Limits;
  log: Logger;
};

export function createLimits(config: Config): Limits {
  return {
    loginPerIp: memoryLimiter('login-ip', {
      points: config.login.maxPerIp,
      durationSeconds: config.login.ipWindowSeconds,
    }),
    loginFailuresPerEmail: memoryLimiter('login-email', {
      points: config.login.maxFailuresPerEmail,
      durationSeconds: config.login.emailWindowSeconds,
    }),
    signupPerIp: memoryLimiter('signup-ip', {
      points: config.signup.maxPerIp,
      durationSeconds: config.signup.ipWindowSeconds,
    }),
  };
}
