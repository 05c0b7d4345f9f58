// PostgreSQL's own CPU for a read with its claims, against the read alone (issue 28: the claims
// step at most the read it guards; claims + read ≥ 0.8× a plain read). bench/rest.ts's throughput
// figures mix this with two Node processes and wrk on the same cores, and their rounds spread by
// ±20 %; this reads the work of one backend directly: its CPU time from /proc (bench/cpu.ts, to the
// nanosecond where the kernel keeps schedstat) over a run of requests on one connection.
// For each read bench/rest.ts recorded as one implicit transaction (claims and read before one
// Sync, db.queryAs), three ways of sending it take turns in rounds, medians printed:
//   claims + read  what the service sends (one Sync),
//   claims alone   the claims statement as a transaction of its own,
//   read alone     the same read as the owner, no claims, no row-level security.
// Only when the server runs on this machine (its backend is in /proc); otherwise says so.
import pg from 'pg';
import { OneSync, runOneSync } from '../src/platform/db/one-sync.ts';
import { median } from './child.ts';
import { backendCpu } from './cpu.ts';
import type { BenchRequest, Fixture, Statement } from './rest-service.ts';

const REQUESTS = Number(process.env.BENCH_DB_CPU_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

type Way = { label: string; send(client: pg.Client, id: string): Promise<unknown> };

function waysOf(r: BenchRequest): Way[] {
  const [claims, read] = r.statements as [Statement, Statement];
  const withId = (s: Statement, id: string) => s.values.map((v) => (v === r.ids[0] ? id : v));
  const named = (s: Statement, name: string, id: string) => ({ name, text: s.text, values: withId(s, id) });
  return [
    {
      label: 'claims + read',
      send: (c, id) => runOneSync(c, new OneSync([named(claims, 'c', id), named(read, 'r', id)])),
    },
    { label: 'claims alone', send: (c, id) => c.query(named(claims, 'c', id)) },
    { label: 'read alone', send: (c, id) => c.query(named(read, 'r', id)) },
  ];
}

/**
 * `n` connections and the CPU their backends have used together, in µs (`cpu`: NaN when the
 * server is not on this machine, whose backends /proc cannot see). `end` closes them.
 */
export async function openBackends(url: string, n: number) {
  const clients = await Promise.all(
    Array.from({ length: n }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  const pids = await Promise.all(
    clients.map(async (c) => (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid),
  );
  return {
    clients,
    cpu: () => pids.reduce((sum: number, pid) => sum + (pid === undefined ? Number.NaN : backendCpu(pid)), 0),
    end: () => Promise.all(clients.map((c) => c.end())),
  };
}

/** Lines of figures, one per measured read, for bench/rest.ts's summary. */
export async function databaseCpu(url: string, fixture: Fixture): Promise<string[]> {
  const backends = await openBackends(url, 1);
  const [client] = backends.clients as [pg.Client];
  const lines: string[] = [];
  try {
    if (Number.isNaN(backends.cpu())) {
      console.log('postgres CPU per request: skipped (the server is not on this machine)');
      return lines;
    }
    for (const r of fixture.requests.filter((x) => x.oneSync && x.readOnly)) {
      const ways = waysOf(r);
      const run = async (way: Way, n: number) => {
        for (let i = 0; i < n; i++) await way.send(client, r.ids[i % r.ids.length] as string);
      };
      for (const way of ways) await run(way, 1_000); // prepared, planned, cached
      const us = ways.map((): number[] => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [k, way] of ways.entries()) {
          const before = backends.cpu();
          await run(way, REQUESTS);
          us[k]?.push((backends.cpu() - before) / REQUESTS);
        }
      }
      const [both, claims, read] = us.map(median) as [number, number, number];
      console.log(
        `postgres CPU per request, ${r.label} (${REQUESTS} requests × ${ROUNDS} rounds, one backend)`,
      );
      for (const [k, way] of ways.entries()) {
        console.log(
          `  ${way.label.padEnd(14)} ${median(us[k] ?? [])
            .toFixed(1)
            .padStart(6)} µs   rounds: ${us[k]?.map((x) => x.toFixed(0)).join(' / ')}`,
        );
      }
      lines.push(
        `rest postgres ${r.label}: PostgreSQL CPU a request, claims + read ${both.toFixed(1)} µs against the read ` +
          `alone ${read.toFixed(1)} µs (the read alone at ${(read / both).toFixed(2)}× its cost); the claims ` +
          `statement alone ${claims.toFixed(1)} µs, ${(claims / read).toFixed(2)}× the read (goal ≤ 1)`,
      );
    }
  } finally {
    await backends.end();
  }
  return lines;
}
