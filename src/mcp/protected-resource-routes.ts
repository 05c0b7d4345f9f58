import { newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { MCP_PATHS, metadataPath, protectedResourceMetadata } from './protected-resource.ts';

/** RFC 9728 metadata for each path of the MCP endpoint; public, any origin may read it. */
export function protectedResourceRoutes(s: Services) {
  const app = newRouter();
  for (const path of MCP_PATHS) {
    app.get(metadataPath(path), (c) => {
      c.header('cache-control', 'public, max-age=3600');
      return c.json(protectedResourceMetadata(s.publicUrl, path), 200);
    });
  }
  return app;
}
