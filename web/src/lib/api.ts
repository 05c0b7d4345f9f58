import { FunctionsHttpError } from '@supabase/supabase-js';
import { supabase } from './supabase';

/** An error the service answered, carrying its `message` (written for people) and `details`. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

type ErrorBody = { error?: string; code?: string; message?: string; details?: unknown };

export async function fromResponse(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => ({}))) as ErrorBody;
  const details =
    body.details && typeof body.details === 'object' ? (body.details as Record<string, unknown>) : {};
  return new ApiError(body.message ?? `The service answered ${res.status}`, res.status, body.error, details);
}

type Query = Record<string, string | number | boolean | undefined | null>;

const withQuery = (name: string, query?: Query) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {}))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${name}?${s}` : name;
};

/** Calls an edge function (`/functions/v1/<name>`); a failure throws its error body's message. */
export async function invoke<T>(
  name: string,
  opts: { method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'; body?: unknown; query?: Query } = {},
): Promise<T> {
  const { data, error } = await supabase.functions.invoke(withQuery(name, opts.query), {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    body: opts.body as Record<string, unknown> | undefined,
  });
  if (error instanceof FunctionsHttpError) throw await fromResponse(error.context as Response);
  if (error) throw new ApiError('The service cannot be reached; check your connection and try again');
  return data as T;
}

/** Unwraps a supabase-js `/rest/v1` or storage result, throwing the service's message. */
export function must<T>(result: { data: T | null; error: { message: string; code?: string } | null }): T {
  if (result.error) throw new ApiError(result.error.message, undefined, result.error.code);
  return result.data as T;
}

/** What to show a person for any thrown value. */
export const messageOf = (err: unknown) =>
  err instanceof Error ? err.message : 'Something went wrong; try again';
