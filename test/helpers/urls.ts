/**
 * The server's maintenance database (where databases are created and dropped): the server itself,
 * or TEST_DATABASE_ADMIN_URL when TEST_DATABASE_URL is a pooler (.ci/run). A pooler keeps idle
 * server connections to the databases it served, and a template with any connection cannot be
 * copied, so the template is made and migrated past the pooler too (global-setup.ts).
 */
export const adminUrl = (server: string) => process.env.TEST_DATABASE_ADMIN_URL || server;

export function databaseUrl(server: string, database: string): string {
  const u = new URL(server);
  u.pathname = `/${database}`;
  return u.toString();
}
