import { z } from 'zod';
import { DEFAULT_PAGE, MAX_PAGE } from '../../domain/pagination.ts';

// Input fields several tools share.

export const limit = () =>
  z
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE)
    .default(DEFAULT_PAGE)
    .describe(`How many records to return (default ${DEFAULT_PAGE}, at most ${MAX_PAGE})`);

export const cursor = () =>
  z.string().max(500).optional().describe('next_cursor from the previous page; omit for the first page');

export const nextCursor = () =>
  z.string().nullable().describe('Pass as cursor to get the next page; null when there are no more');

export const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
