import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * JSON lines. Nothing that could carry a secret is ever passed to the logger (no headers, no
 * bodies, no query strings); the redaction list is a second line of defence.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'svc' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          '*.password',
          '*.api_key',
          '*.access_token',
          '*.refresh_token',
          '*.authorization',
          '*.apikey',
          'password',
          'api_key',
          'token',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
