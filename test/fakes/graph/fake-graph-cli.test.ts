// `svc dev fake-graph`: the fake Graph API as a developer runs it beside the service. It prints the
// URL to put in META_GRAPH_URL, takes real sends there, prints one line per request without ever
// printing a token, and stops cleanly on SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.ts';

const BIN = fileURLToPath(new URL('../../../bin/svc.js', import.meta.url));

let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
});

/** Starts the command and resolves with its URL and a way to wait for output. */
function start(args: string[]) {
  return new Promise<{ url: string; output: () => string; waitFor: (re: RegExp) => Promise<void> }>(
    (resolve, reject) => {
      const proc = spawn(process.execPath, [BIN, 'dev', 'fake-graph', ...args]);
      child = proc;
      let out = '';
      const waiters: { re: RegExp; done: () => void }[] = [];
      proc.stdout.on('data', (d) => {
        out += d;
        for (const w of [...waiters]) if (w.re.test(out)) w.done();
        const m = /fake graph listening on (\S+)/.exec(out);
        if (m?.[1])
          resolve({
            url: m[1],
            output: () => out,
            waitFor: (re) => new Promise((done) => (re.test(out) ? done() : waiters.push({ re, done }))),
          });
      });
      proc.stderr.on('data', (d) => {
        out += d;
      });
      proc.on('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
    },
  );
}

describe('svc dev fake-graph', () => {
  it('prints its URL and the variables to set, serves sends there, and logs them without the token', async () => {
    const fake = await start(['--port', '0', '--account', '106540352242922=EAAcli-secret:whatsapp']);
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(fake.output()).toContain(`META_GRAPH_URL=${fake.url}`);
    const res = await fetch(`${fake.url}/v26.0/106540352242922/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer EAAcli-secret', 'content-type': 'application/json' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        to: '16505551234',
        type: 'text',
        text: { body: 'hi' },
      }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { messages: { id: string }[] }).messages[0]?.id).toMatch(/^wamid\./);
    await fake.waitFor(/POST \/v26\.0\/106540352242922\/messages whatsapp -> 200/);
    // Graph also takes the token as a form field (Meta's curl examples): not printed either.
    const form = new URLSearchParams({
      messaging_product: 'whatsapp',
      to: '16505551234',
      type: 'text',
      text: JSON.stringify({ body: 'form' }),
      access_token: 'EAAcli-secret',
    });
    expect(
      (await fetch(`${fake.url}/v26.0/106540352242922/messages`, { method: 'POST', body: form })).status,
    ).toBe(200);
    await fake.waitFor(/"body":"form"/);
    expect(fake.output()).not.toContain('EAAcli-secret');

    const exited = new Promise<number | null>((r) => child?.once('exit', (code) => r(code)));
    child?.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses an option it does not know, with its usage', async () => {
    const { code, stderr } = await runCli(['dev', 'fake-graph', '--account', 'no-channel'], {});
    expect(code).toBe(2);
    expect(stderr).toMatch(/usage: svc dev fake-graph/);
  });
});
