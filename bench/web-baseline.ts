// The baseline for bench/web.ts: a bare node:http server sending the same built files, gzipped
// the same way, with the same page for every /app path; no framework, no database. What the
// browser needs to load and start the dashboard from a server that does nothing else.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

const dist = new URL('../web/dist/', import.meta.url);
const anonKey = process.env.BENCH_ANON_KEY ?? '';
const files = new Map<string, { body: Buffer; type: string }>();
const typeOf = (name: string) =>
  name.endsWith('.js') ? 'text/javascript' : name.endsWith('.css') ? 'text/css' : 'image/svg+xml';
for (const name of readdirSync(new URL('assets/', dist))) {
  files.set(`/assets/${name}`, {
    body: gzipSync(readFileSync(new URL(`assets/${name}`, dist))),
    type: typeOf(name),
  });
}
files.set('/favicon.svg', {
  body: gzipSync(readFileSync(new URL('favicon.svg', dist))),
  type: 'image/svg+xml',
});
const page = readFileSync(new URL('index.html', dist), 'utf8').replace(
  '<!--svc-config-->',
  `<script type="application/json" id="svc-config">${JSON.stringify({ anonKey })}</script>`,
);
const html = gzipSync(page);

const server = createServer((req, res) => {
  const file = files.get(req.url ?? '');
  const body = file?.body ?? html;
  // The caching the service sends: hashed assets for a year, the page revalidated.
  res.writeHead(200, {
    'content-type': file?.type ?? 'text/html',
    'content-encoding': 'gzip',
    'content-length': body.length,
    'cache-control': file ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
