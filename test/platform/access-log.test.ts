import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { accessLog, createLogger } from '../../src/platform/log.ts';

// Access lines wait a moment and leave together (platform/log.ts); none may be lost on the way.

const LOG_TS = new URL('../../src/platform/log.ts', import.meta.url).pathname;

describe('access lines', () => {
  it('reach the destination by themselves, the lines of a burst in one write', async () => {
    const writes: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        writes.push(chunk.toString());
        cb();
      },
    });
    const access = accessLog(createLogger('info', sink));
    const before = Date.now();
    for (const id of ['burst-1', 'burst-2', 'burst-3']) access(id, 'GET', '/rest/v1/contacts', 200, 0);
    // A path is the caller's: quoted, whatever it holds.
    access('burst-4', 'GET', '/rest/v1/a"b\\c', 404, performance.now());
    const after = Date.now();
    await vi.waitFor(() => expect(writes).toHaveLength(1));
    const lines = (writes[0] as string)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.req_id)).toEqual(['burst-1', 'burst-2', 'burst-3', 'burst-4']);
    expect(lines[0]).toMatchObject({ level: 30, service: 'svc', msg: 'request', method: 'GET', status: 200 });
    expect(lines[3]).toMatchObject({ path: '/rest/v1/a"b\\c', status: 404, ms: 0 });
    // Stamped when the request ended, as pino stamps a line (ISO time, to the millisecond).
    for (const l of lines) {
      expect(l.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(l.time)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(l.time)).toBeLessThanOrEqual(after);
    }
  });

  it('are written when the process exits at once, as a crash does', () => {
    const script = `
      import { accessLog, createLogger } from ${JSON.stringify(LOG_TS)};
      accessLog(createLogger('info'))('last-words-1', 'POST', '/rest/v1/orders', 500, 0);
      process.exit(3);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(child.status).toBe(3);
    const line = JSON.parse(child.stdout.trim());
    expect(line).toMatchObject({ req_id: 'last-words-1', path: '/rest/v1/orders', status: 500 });
  });
});
