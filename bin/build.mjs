// Builds the JavaScript `svc` runs (dist/svc.mjs) from src/: one ESM bundle of our code, packages
// left as imports (docs/decisions.md, "JavaScript at run time"). `npm install` runs it (package.json
// "prepare"); bin/svc.js runs it again only when src/ changed since, so a checkout
// being edited never runs stale code and a deployment never loads a compiler.
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = (p) => fileURLToPath(new URL(`../${p}`, import.meta.url));
export const BUNDLE = root('dist/svc.mjs');
const SOURCES = ['src', 'bin/build.mjs'];

/** The newest modification time under `path` (a file or a directory), in ms. */
function newest(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let t = st.mtimeMs; // a deleted file shows only in its directory's time
  for (const name of readdirSync(path)) t = Math.max(t, newest(`${path}/${name}`));
  return t;
}

/** True when the bundle is missing or older than anything it is built from. */
export function stale() {
  let built;
  try {
    built = statSync(BUNDLE).mtimeMs;
  } catch {
    return true;
  }
  return SOURCES.some((p) => newest(root(p)) > built);
}

export async function build() {
  // Loaded here only: a start with a fresh bundle never loads esbuild.
  const { build: esbuild } = await import('esbuild');
  const out = await esbuild({
    entryPoints: [root('src/cli/main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    packages: 'external',
    sourcemap: 'linked',
    outfile: BUNDLE,
    write: false,
    logLevel: 'warning',
  });
  // Written beside and renamed into place: several processes (tests, a worker started with the
  // service) may find the bundle stale at once, and none may import a half-written file.
  mkdirSync(root('dist'), { recursive: true });
  for (const file of out.outputFiles) {
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
