import type { IncomingMessage, ServerResponse } from 'node:http';
import { payloadTooLarge } from '../errors.ts';

// Request bodies for a handler served outside the Hono app (src/rest/server.ts), held to a limit
// as app.ts holds every other surface's: a declared Content-Length over it is refused before
// anything is read, a chunked body once it outgrows it. Either way the connection closes after
// the answer, since the rest of that body is never read.

/** Throws 413 when the request declares a body longer than `limit` bytes. */
export function refuseDeclaredTooLarge(req: IncomingMessage, res: ServerResponse, limit: number): void {
  const length = req.headers['content-length'];
  if (length !== undefined && req.headers['transfer-encoding'] === undefined && Number(length) > limit) {
    res.shouldKeepAlive = false;
    throw payloadTooLarge(limit);
  }
}

/** The body's bytes; rejects with 413 (payloadTooLarge) once it passes `limit` bytes. */
export function readBytes(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size > limit) return; // refused already: what is left is discarded, not kept
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        res.shouldKeepAlive = false;
        reject(payloadTooLarge(limit));
      }
    });
    req.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** The body as UTF-8 text; rejects with 413 (payloadTooLarge) once it passes `limit` bytes. */
const readText = (req: IncomingMessage, res: ServerResponse, limit: number) =>
  readBytes(req, res, limit).then((b) => b.toString('utf8'));

/**
 * A request's JSON body, read and parsed at most once, when first asked for: a SyntaxError for
 * text that is not JSON, 413 for a body over the limit.
 */
export class JsonBody {
  #parsed: Promise<unknown> | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly limit: number,
  ) {}

  json(): Promise<unknown> {
    this.#parsed ??= readText(this.req, this.res, this.limit).then(JSON.parse);
    return this.#parsed;
  }
}
