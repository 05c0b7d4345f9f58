// `npm install` builds the dashboard (package.json "prepare"). Where Vite is not installed (npm ci
// --dry-run, or an install with --omit=dev) there is nothing to build with: say so and succeed, and
// the service answers / with how to build it.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let vite;
try {
  require.resolve('vite');
  vite = await import('vite');
} catch {
  console.warn(
    'vite is not installed: the dashboard is not built (run `npm run build:web` after a full install)',
  );
  process.exit(0);
}
await vite.build({ configFile: new URL('./vite.config.ts', import.meta.url).pathname, logLevel: 'warn' });
