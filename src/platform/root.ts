import { existsSync } from 'node:fs';

// The project's root directory: the nearest one above this module with a package.json. The same
// answer from src/platform/root.ts and from the chunk of the bundle it ends up in (dist/build-…/, bin/build.mjs).
function findRoot(): URL {
  for (let dir = new URL('./', import.meta.url); ; ) {
    if (existsSync(new URL('package.json', dir))) return dir;
    const up = new URL('../', dir);
    if (up.href === dir.href) throw new Error('no package.json above the sources');
    dir = up;
  }
}

export const ROOT = findRoot();
