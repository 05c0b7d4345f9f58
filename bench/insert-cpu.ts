// PostgreSQL's own CPU for the insert bench/rest.ts measures (one contact, claims and insert
// before one Sync, as the service sends it) when many connections write to one tenant at once,
// against the same inserts with the plan-ceiling trigger switched off: what keeping the tenant's
// contact count exact (its counter row, migrations/0036 and 0058) costs the database. One
// connection and BENCH_INSERT_CONNECTIONS (32) connections, each way, take turns in rounds;
// medians printed, with the rate. The CPU is every connection's backend's, from /proc (cpu.ts).
// Run at the end of bench/rest.ts on PostgreSQL, after the servers have stopped (the trigger is
// switched off only for its own rounds, and on again before it returns; the scratch database's
// contact counter falls behind meanwhile, as docs/decisions.md says a bypass does, and the
// database is dropped after the bench).
import pg from 'pg';
import { OneSync, runOneSync } from '../src/platform/db/one-sync.ts';
import { median } from './child.ts';
import { backendCpu } from './cpu.ts';
import type { Fixture } from './rest-service.ts';

const INSERTS = Number(process.env.BENCH_INSERTS ?? 3_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MANY = Number(process.env.BENCH_INSERT_CONNECTIONS ?? 32);
const TRIGGER = 'alter table public.contacts %s trigger contacts_plan_ceiling';

export async function insertCpu(url: string, fixture: Fixture): Promise<string[]> {
  const insert = fixture.requests.find((r) => r.oneSync && !r.readOnly && r.path === '/rest/v1/contacts');
  const [claims, write] = insert?.statements ?? [];
  if (!claims || !write) return [];
  const statements: ConstructorParameters<typeof OneSync>[0] = [
    { name: 'ic', text: claims.text, values: claims.values },
    { name: 'iw', text: write.text, values: write.values },
  ];
  const clients = await Promise.all(
    Array.from({ length: MANY }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  const lines: string[] = [];
  try {
    const pids = await Promise.all(
      clients.map(
        async (c) => (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid,
      ),
    );
    if (pids.some((p) => p === undefined || Number.isNaN(backendCpu(p)))) {
      console.log('postgres CPU per insert: skipped (the server is not on this machine)');
      return lines;
    }
    const cpu = () => pids.reduce((sum: number, p) => sum + backendCpu(p as number), 0);
    /** `n` inserts over the first `connections` clients; µs of CPU an insert, and inserts a second. */
    const run = async (connections: number, n: number) => {
      let left = n;
      const [before, started] = [cpu(), performance.now()];
      await Promise.all(
        clients.slice(0, connections).map(async (c) => {
          while (left-- > 0) await runOneSync(c, new OneSync(statements));
        }),
      );
      return { us: (cpu() - before) / n, rate: n / ((performance.now() - started) / 1000) };
    };
    const ways = [
      { label: 'with its counter', trigger: 'enable' },
      { label: 'no ceiling trigger', trigger: 'disable' },
    ];
    for (const connections of [1, MANY]) {
      const got = ways.map((): { us: number; rate: number }[] => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [k, way] of ways.entries()) {
          await clients[0]?.query(TRIGGER.replace('%s', way.trigger));
          await run(connections, 200); // prepared and warm
          got[k]?.push(await run(connections, INSERTS));
        }
      }
      await clients[0]?.query(TRIGGER.replace('%s', 'enable'));
      const [kept, bare] = got.map((g) => ({
        us: median(g.map((x) => x.us)),
        rate: median(g.map((x) => x.rate)),
      })) as [{ us: number; rate: number }, { us: number; rate: number }];
      console.log(
        `postgres CPU per insert, one contact from ${connections} connection(s) (${INSERTS} × ${ROUNDS} rounds)`,
      );
      for (const [k, way] of ways.entries()) {
        const g = got[k] ?? [];
        console.log(
          `  ${way.label.padEnd(18)} ${median(g.map((x) => x.us))
            .toFixed(0)
            .padStart(5)} µs, ` +
            `${median(g.map((x) => x.rate))
              .toFixed(0)
              .padStart(5)} inserts/s   rounds: ${g.map((x) => x.us.toFixed(0)).join(' / ')} µs`,
        );
      }
      lines.push(
        `rest postgres insert one contact from ${connections} connection(s): PostgreSQL CPU ${kept.us.toFixed(0)} µs an insert ` +
          `with its counter against ${bare.us.toFixed(0)} without the ceiling trigger (${(kept.us / bare.us).toFixed(2)}×); ` +
          `${kept.rate.toFixed(0)} against ${bare.rate.toFixed(0)} inserts/s (${(kept.rate / bare.rate).toFixed(2)}×)`,
      );
    }
  } finally {
    await clients[0]?.query(TRIGGER.replace('%s', 'enable')).catch(() => {});
    await Promise.all(clients.map((c) => c.end()));
  }
  return lines;
}
