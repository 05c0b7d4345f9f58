import { z } from 'zod';
import { DEFAULT_PAGE, MAX_PAGE } from '../../domain/pagination.ts';
import { validationError } from '../../platform/errors.ts';
import { offered } from '../tool.ts';

// Input fields and hints several tools share. A field's name, type, format, bounds and default
// already tell a model most of what it needs: a description is added only where they do not.

export const limit = () => z.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE);

export const cursor = () => z.string().max(500).optional().describe('next_cursor of the previous page');

export const nextCursor = () => z.string().nullable();

export const READ = { readOnlyHint: true } as const;
export const CREATE = { destructiveHint: false, idempotentHint: false };
export const UPDATE = { destructiveHint: false, idempotentHint: true };

/** What a wrong date or time is told (zod's union says only "Invalid input"). */
export const DATE_OR_TIME = 'An ISO 8601 date-time with offset (2026-11-27T09:00:00Z) or a date (2026-11-27)';

/**
 * A date-time or a plain date (a day: see src/domain/calendar-days.ts), offered to models as a
 * `date-time` string as before (`description`, when given, says a date is taken too).
 */
export const dateOrTime = (description?: string) =>
  offered(z.union([z.iso.datetime({ offset: true }), z.iso.date()], { error: DATE_OR_TIME }), {
    type: 'string',
    format: 'date-time',
    ...(description ? { description } : {}),
  });

/** Refuses a range given backwards, naming both fields (an empty answer would hide the mistake). */
export function orderedRange(from: string | undefined, to: string | undefined, names: [string, string]) {
  if (from === undefined || to === undefined) return;
  const instant = (v: string) => Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v);
  if (instant(to) < instant(from))
    throw validationError([{ path: names[1], message: `Must not be before ${names[0]} (${from})` }]);
}
