// The Graph deadline counts the time Meta had to answer, not the time this process was too busy to
// read the answer (src/platform/net/fair-deadline.ts). The Graph API here is a server in another
// process that answers at once; this process blocks its own event loop well past the deadline
// right after the request has left. The answer is then waiting in the socket: it must be taken,
// not turned into a timeout (which made the publisher wait a 30 s backoff for a post Meta had made).
// A server that never answers still times out.
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callGraph } from '../../src/channels/graph-client.ts';

let server: ChildProcess;
let url = '';

beforeAll(async () => {
  // /fast answers at once; /never never answers.
  const code = `require('node:http').createServer((req, res) => {
    if (req.url === '/never') return;
    req.resume(); req.on('end', () => res.writeHead(200, {'content-type': 'application/json'}).end('{"id":"1"}'));
  }).listen(0, '127.0.0.1', function () { process.send(this.address().port); });`;
  server = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => server.once('message', (p) => resolve(p as number)));
  url = `http://127.0.0.1:${port}`;
});
afterAll(() => {
  server?.kill();
});

/** Busy for `ms`: nothing else in this process runs meanwhile. */
function block(ms: number) {
  const end = performance.now() + ms;
  while (performance.now() < end) {}
}

describe('the Graph deadline', () => {
  it('takes an answer that arrived while this process was busy past the deadline', async () => {
    // Warm the connection so the request leaves on the first turn.
    await callGraph('GET', `${url}/fast`, 'EAAtoken-1', null, { timeoutMs: 2000 });
    const call = callGraph('POST', `${url}/fast`, 'EAAtoken-1', { a: 1 }, { timeoutMs: 300 });
    await new Promise((r) => setTimeout(r, 30)); // the request is out; the answer is on its way
    // Busy in the loop's check phase, as a burst of other work would keep it: the next turn runs
    // timers (the deadline's) before it reads sockets (the answer).
    await new Promise<void>((r) => setImmediate(() => r(block(1000))));
    const answer = await call;
    expect(answer).toMatchObject({ ok: true, status: 200, body: { id: '1' } });
  });

  it('still gives up on a server that never answers', async () => {
    const started = performance.now();
    const answer = await callGraph('GET', `${url}/never`, 'EAAtoken-1', null, { timeoutMs: 300 });
    expect(answer).toMatchObject({ ok: false, transient: true, error: { type: 'timeout' } });
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
