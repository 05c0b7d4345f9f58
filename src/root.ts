// The project's root directory. This file sits one level below it, as the bundle `svc` runs does
// (dist/svc.mjs, bin/build.mjs), so the same URL is right from src/ and from dist/.
export const ROOT = new URL('../', import.meta.url);
