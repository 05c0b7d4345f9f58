// What this file protects: the one rule that decides, after a run, whether a job is done, runs
// again or gives up (src/platform/queue/outcome.ts). Pure: no database, no clock of its own.

import { describe, expect, it } from 'vitest';
import { shortestRetryWindowSeconds, verdict } from '../../src/platform/queue/outcome.ts';
import type { JobOutcome, JobPolicy } from '../../src/platform/queue/queue.ts';

const policy: JobPolicy = {
  attempts: 3,
  backoffSeconds: 30,
  maxBackoffSeconds: 600,
  maxAgeSeconds: 3600,
  leaseSeconds: 60,
};
const created = new Date('2026-01-01T00:00:00Z');
const at = (seconds: number) => new Date(created.getTime() + seconds * 1000);
const boom = new Error('503');

const cases: [string, JobOutcome, number, number, string][] = [
  ['success is done', { status: 'done' }, 1, 0, 'done'],
  [
    'a transient failure with attempts and time left runs again',
    { status: 'retry', error: boom },
    1,
    10,
    'retry',
  ],
  [
    'a permanent failure gives up on the first attempt',
    { status: 'fail', error: boom },
    1,
    0,
    'give-up:permanent',
  ],
  ['the last attempt failing gives up', { status: 'retry', error: boom }, 3, 100, 'give-up:attempts'],
  [
    'past the max age a transient failure gives up',
    { status: 'retry', error: boom },
    2,
    3600,
    'give-up:max_age',
  ],
  ['just before the max age it still runs again', { status: 'retry', error: boom }, 2, 3599, 'retry'],
  ['success past the max age is still a success', { status: 'done' }, 3, 7200, 'done'],
];

describe('after a run', () => {
  it.each(cases)('%s', (_name, outcome, attempt, ageSeconds, expected) => {
    const v = verdict(outcome, { attempt, createdAt: created }, policy, at(ageSeconds));
    expect(v.action === 'give-up' ? `give-up:${v.failure.reason}` : v.action).toBe(expected);
  });

  it('gives up with the error of the run that ended it', () => {
    const v = verdict({ status: 'retry', error: boom }, { attempt: 3, createdAt: created }, policy, at(1));
    expect(v).toEqual({ action: 'give-up', failure: { reason: 'attempts', error: boom } });
  });
});

describe('the retry window', () => {
  it('of the policy docs/jobs.md suggests for messages is over an hour', () => {
    const messages = {
      attempts: 10,
      backoffSeconds: 30,
      maxBackoffSeconds: 1800,
      maxAgeSeconds: 3 * 3600,
      leaseSeconds: 120,
    };
    // 30 + 60 + … + 960, then three waits at the 1800 s cap
    expect(shortestRetryWindowSeconds(messages)).toBe(7290);
  });

  it('is cut by the max age, and is nothing for a single attempt', () => {
    expect(shortestRetryWindowSeconds({ ...policy, attempts: 20, maxAgeSeconds: 600 })).toBe(600);
    expect(shortestRetryWindowSeconds({ ...policy, attempts: 1 })).toBe(0);
  });
});
