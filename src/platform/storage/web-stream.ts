import type { Readable } from 'node:stream';

/**
 * A Node stream as a web ReadableStream (a Response's body), read one chunk at a time as the
 * client takes them: nothing is read ahead of the socket (Readable.toWeb may queue without
 * bound), and a client that goes away destroys the source (a file, an S3 response).
 */
export function toWebStream(source: Readable): ReadableStream<Uint8Array> {
  const chunks = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await chunks.next();
          if (done) controller.close();
          else controller.enqueue(value as Uint8Array);
        } catch (err) {
          controller.error(err);
        }
      },
      async cancel() {
        source.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}
