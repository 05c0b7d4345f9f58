// Builds the JavaScript `svc` runs (dist/svc.mjs) from src/: ESM bundles of our code, packages
// left as imports (docs/decisions.md, "JavaScript at run time"). `npm install` runs it (package.json
// "prepare"); bin/svc.js runs it again only when src/ changed since, so a checkout
// being edited never runs stale code and a deployment never loads a compiler.
import { readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = (p) => fileURLToPath(new URL(`../${p}`, import.meta.url));

// Packages left as imports, each for a reason; every other one is bundled into the chunks, which
// spares Node resolving, reading and linking some 350 of their files at each start
// (docs/decisions.md, "Packages in the bundle").
const EXTERNAL = [
  '@electric-sql/pglite', // reads its .wasm and .data beside its own files
  '@node-rs/bcrypt', // a native addon
  'pino', // starts its transports from files in its own directory
  '@opentelemetry/*', // the API is one per process; the SDK is loaded only when tracing
  '@modelcontextprotocol/sdk', // loaded at the first MCP request, with its own zod as before
  'stripe', // loaded at first use (billing)
  'nodemailer', // loaded at the first mail (SMTP_URL)
  'ioredis', // loaded only with REDIS_URL
  'rate-limiter-flexible', // loaded only with REDIS_URL
  'tar', // backup and restore
  '@aws-sdk/*', // loaded only with STORAGE_URL (an S3 bucket)
  'pg-native', // pg's optional native client, not installed
  'esbuild',
];
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
  // Chunks, so a command loads only its own code (src/cli/main.ts imports each command when it
  // runs). A build goes to a directory of its own and dist/svc.mjs, which imports its entry, is
  // replaced last by a rename: several processes may find the bundle stale at once, and none may
  // import half a build, nor lose the chunks of the one it started on.
  const id = `build-${Date.now()}-${process.pid}`;
  await esbuild({
    entryPoints: { svc: root('src/cli/main.ts') },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node22.12',
    external: EXTERNAL,
    // Bundled CommonJS packages require Node's modules; an ES module has no `require` of its own.
    banner: {
      js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
    },
    sourcemap: 'linked',
    outdir: root(`dist/${id}`),
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  const tmp = `${BUNDLE}.${process.pid}.tmp`;
  // Node's compile cache (V8's code for each module, keyed by the file's content) lives and goes
  // with the build: a start after the first skips compiling. Where the directory cannot be written
  // (a read-only install), Node goes on without it, silently.
  writeFileSync(
    tmp,
    `import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';
enableCompileCache(fileURLToPath(new URL('./${id}/compile-cache', import.meta.url)));
await import('./${id}/svc.mjs');
`,
  );
  renameSync(tmp, BUNDLE);
  // The two newest builds stay: the one just made and the one a process may still be starting on.
  const builds = readdirSync(root('dist'))
    .filter((name) => name.startsWith('build-'))
    .sort((a, b) => Number(b.split('-')[1]) - Number(a.split('-')[1]));
  for (const old of builds.slice(2)) rmSync(root(`dist/${old}`), { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
