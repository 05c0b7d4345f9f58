// The fake Shopify is never part of the running service: only `svc dev fake-shopify` loads it,
// and only when asked (a dynamic import in src/cli/main.ts). The service reaches Shopify through
// SHOPIFY_SHOP_URL alone.
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

describe('the fake Shopify stays out of the service', () => {
  it('is imported by src/cli/dev-fake-shopify.ts alone, and that file only by a dynamic import', () => {
    const importers = files(SRC)
      .filter((f) => !f.startsWith(path.join(SRC, 'dev')))
      .filter((f) => /from ['"][^'"]*\/dev\/fake-shopify\//.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(SRC, f));
    expect(importers).toEqual(['cli/dev-fake-shopify.ts']);
    const staticCli = files(SRC).filter((f) =>
      /from ['"][^'"]*dev-fake-shopify\.ts['"]/.test(readFileSync(f, 'utf8')),
    );
    expect(staticCli).toEqual([]);
  });
});
