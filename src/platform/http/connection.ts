import type { Context } from 'hono';

/**
 * Marks the connection to be closed after this response: a request refused before its body was
 * read whole leaves the rest of that body on the socket, so it must not carry another request.
 */
export function closeAfterResponse(c: Context): void {
  const outgoing = (c.env as { outgoing?: { shouldKeepAlive: boolean } } | undefined)?.outgoing;
  if (outgoing) outgoing.shouldKeepAlive = false;
}
