import { z } from 'zod';
import { DEFAULT_PAGE, MAX_PAGE } from '../../domain/pagination.ts';

// Input fields and hints several tools share. A field's name, type, format, bounds and default
// already tell a model most of what it needs: a description is added only where they do not.

export const limit = () => z.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE);

export const cursor = () => z.string().max(500).optional().describe('next_cursor of the previous page');

export const nextCursor = () => z.string().nullable();

export const READ = { readOnlyHint: true } as const;
export const CREATE = { destructiveHint: false, idempotentHint: false };
export const UPDATE = { destructiveHint: false, idempotentHint: true };
