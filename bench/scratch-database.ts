import pg from 'pg';

export const BENCH_SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

/**
 * Runs `fn` with the URL of a fresh database on the PostgreSQL server, dropped afterwards; when
 * the server cannot be used, says so and returns null instead.
 */
export async function withScratchDatabase<T>(
  tag: string,
  fn: (url: string) => Promise<T>,
): Promise<T | null> {
  const admin = new pg.Client({ connectionString: BENCH_SERVER, connectionTimeoutMillis: 3000 });
  const name = `svc_bench_${tag}_${process.pid}`;
  let created = false;
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
    created = true;
    const url = new URL(BENCH_SERVER);
    url.pathname = `/${name}`;
    return await fn(url.toString());
  } catch (err) {
    if (created) throw err;
    console.log(`postgres: skipped (${(err as Error).message})`);
    return null;
  } finally {
    if (created) await admin.query(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end().catch(() => {});
  }
}
