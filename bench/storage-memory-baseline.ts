// The baseline of bench/storage-memory.ts: a bare node:http server that pipes a request's body to
// a file and a file back to a response, the least a process can hold while moving the same bytes.
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { serveBare } from './child.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-bare-'));
const fileOf = (url = '') => path.join(dir, encodeURIComponent(url));
const server = createServer(async (req, res) => {
  try {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-length': statSync(fileOf(req.url)).size });
      await pipeline(createReadStream(fileOf(req.url)), res);
    } else {
      await pipeline(req, createWriteStream(fileOf(req.url)));
      res.writeHead(200).end('{}');
    }
  } catch {
    res.destroy();
  }
});
serveBare(server, async () => rmSync(dir, { recursive: true, force: true }));
