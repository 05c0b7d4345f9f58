// `svc webhooks replay`: the command's wiring on the embedded database (the replay itself, a
// rejected event imported after an upgrade, is in meta-processing.test.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-replay-'));
const env = { DATA_DIR: dir, DATABASE_URL: '', LOG_LEVEL: 'silent' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('svc webhooks replay', () => {
  it('refuses a missing or malformed argument with its usage, replays nothing when nothing failed, and says so for an unknown id', async () => {
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const usage = await runCli(['webhooks', 'replay'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('svc webhooks replay <event id>|--failed');
    expect((await runCli(['webhooks', 'replay', 'not-a-uuid'], env)).code).toBe(2);
    const none = await runCli(['webhooks', 'replay', '--failed'], env);
    expect(none.stderr).toBe('');
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toEqual({ replayed: [] });
    const unknown = await runCli(['webhooks', 'replay', '7a1c3e0e-5b6f-4c1e-9d7a-2f3b4c5d6e7f'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no such event');
  }, 60_000);
});
