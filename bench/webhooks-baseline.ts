// The no-op endpoint bench/webhooks.ts holds Meta's receiver against, in a process of its own:
// node:http reads the whole body and answers 200 {"received":true}, verifying nothing and storing
// nothing. What receiving a delivery costs before any of the service's work.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  req.resume();
  req.once('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.send?.({ url: `http://127.0.0.1:${port}` });
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
