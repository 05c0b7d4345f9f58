import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

// PGlite's engine is 9 MB of WebAssembly, which V8 compiles on background threads. `svc start`
// begins that compile before it loads the rest of its code, so the two overlap instead of
// following each other (docs/performance.md, issue 29); openPglite takes the module from here.
// One per process: an instance made from a compiled module costs little (tests open many).

let compiled: Promise<WebAssembly.Module> | undefined;

/** PGlite's WebAssembly module, compiled once per process; the first call starts the compile. */
export function pgliteModule(): Promise<WebAssembly.Module> {
  compiled ??= readFile(createRequire(import.meta.url).resolve('@electric-sql/pglite/pglite.wasm')).then(
    (bytes) => WebAssembly.compile(bytes),
  );
  return compiled;
}
