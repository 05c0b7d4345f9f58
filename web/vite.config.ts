import { defineConfig, type Plugin } from 'vite';

/** The service `npm run dev:web` talks to (started separately with `npm start`). */
const service = process.env.SVC_URL ?? 'http://localhost:54321';

/**
 * In development the page comes from Vite, not the service: copy the service's embedded
 * configuration (the anon key) from its own page so both dev and production read it the same way.
 */
function serviceConfig(): Plugin {
  return {
    name: 'svc-config',
    apply: 'serve',
    async transformIndexHtml(html) {
      const page = await (await fetch(`${service}/`)).text();
      const config = page.match(/<script type="application\/json" id="svc-config">.*?<\/script>/)?.[0];
      if (!config) throw new Error(`No dashboard configuration at ${service}/: is the service running?`);
      return html.replace('<!--svc-config-->', config);
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  // No React plugin: esbuild compiles JSX itself; the plugin would only add Fast Refresh in dev.
  esbuild: { jsx: 'automatic' },
  plugins: [serviceConfig()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The entry (React, the router, supabase-js) is ~650 KB minified, ~195 KB gzipped: the budget
    // is on the gzipped size, which `npm run bench:web` prints.
    chunkSizeWarningLimit: 800,
    rollupOptions: {
      // Libraries mark their modules "use client" for React Server Components; a SPA has none.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  server: {
    // The app imports a few pure modules of the service (src/domain) instead of copying them.
    fs: { allow: ['..'] },
    proxy: Object.fromEntries(['/auth', '/rest', '/functions', '/storage'].map((p) => [p, service])),
  },
});
