// The fake Graph API is never part of the running service: only the `svc dev fake-graph` command
// loads it, and only when asked (a dynamic import in src/cli/main.ts). A static import anywhere
// else would put a fake Meta inside the service's process, one wrong URL away from being used.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

describe('the fake Graph API stays out of the service', () => {
  it('is imported by src/cli/dev-fake-graph.ts alone, and that file only by a dynamic import', () => {
    const importers = files(SRC)
      .filter((f) => !f.startsWith(path.join(SRC, 'dev')))
      .filter((f) => /from ['"][^'"]*\/dev\/fake-graph\//.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(SRC, f));
    expect(importers).toEqual(['cli/dev-fake-graph.ts']);
    const staticCli = files(SRC).filter((f) =>
      /from ['"][^'"]*dev-fake-graph\.ts['"]/.test(readFileSync(f, 'utf8')),
    );
    expect(staticCli).toEqual([]);
  });
});
