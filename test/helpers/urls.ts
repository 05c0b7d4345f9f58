/** The server's maintenance database (where databases are created and dropped). */
export const adminUrl = (server: string) => server;

export function databaseUrl(server: string, database: string): string {
  const u = new URL(server);
  u.pathname = `/${database}`;
  return u.toString();
}
