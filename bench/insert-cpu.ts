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
import { OneSync, runOneSync } from '../src/platform/db/one-sync.ts';
import { median } from './child.ts';
import { openBackends } from './database-cpu.ts';
import type { Fixture } from './rest-service.ts';

const INSERTS = Number(process.env.BENCH_INSERTS ?? 3_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MANY = Number(process.env.BENCH_INSERT_CONNECTIONS ?? 32);
const trigger = (state: 'enable' | 'disable') =>
  `alter table public.contacts ${state} trigger contacts_plan_ceiling`;
const WAYS = [
  { label: 'with its counter', trigger: 'enable' },
  { label: 'no ceiling trigger', trigger: 'disable' },
] as const;

export async function insertCpu(url: string, fixture: Fixture): Promise<string[]> {
  const insert = fixture.requests.find((r) => r.oneSync && !r.readOnly && r.path === '/rest/v1/contacts');
  const [claims, write] = insert?.statements ?? [];
  if (!claims || !write) return [];
  const statements: ConstructorParameters<typeof OneSync>[0] = [
    { name: 'ic', text: claims.text, values: claims.values },
    { name: 'iw', text: write.text, values: write.values },
  ];
  const backends = await openBackends(url, MANY);
  const { clients, cpu } = backends;
  const lines: string[] = [];
  try {
    if (Number.isNaN(cpu())) {
      console.log('postgres CPU per insert: skipped (the server is not on this machine)');
      return lines;
    }
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
    for (const connections of [1, MANY]) {
      const got = WAYS.map((): { us: number; rate: number }[] => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [k, way] of WAYS.entries()) {
          await clients[0]?.query(trigger(way.trigger));
          await run(connections, 200); // prepared and warm
          got[k]?.push(await run(connections, INSERTS));
        }
      }
      const [kept, bare] = got.map((g) => ({
        us: median(g.map((x) => x.us)),
        rate: median(g.map((x) => x.rate)),
        rounds: g.map((x) => x.us.toFixed(0)).join(' / '),
      })) as [Summary, Summary];
      console.log(
        `postgres CPU per insert, one contact from ${connections} connection(s) (${INSERTS} × ${ROUNDS} rounds)`,
      );
      for (const [k, m] of [kept, bare].entries()) {
        console.log(
          `  ${WAYS[k]?.label.padEnd(18)} ${m.us.toFixed(0).padStart(5)} µs, ` +
            `${m.rate.toFixed(0).padStart(5)} inserts/s   rounds: ${m.rounds} µs`,
        );
      }
      lines.push(
        `rest postgres insert one contact from ${connections} connection(s): PostgreSQL CPU ${kept.us.toFixed(0)} µs an insert ` +
          `with its counter against ${bare.us.toFixed(0)} without the ceiling trigger (${(kept.us / bare.us).toFixed(2)}×); ` +
          `${kept.rate.toFixed(0)} against ${bare.rate.toFixed(0)} inserts/s (${(kept.rate / bare.rate).toFixed(2)}×)`,
      );
    }
  } finally {
    await clients[0]?.query(trigger('enable')).catch(() => {});
    await backends.end();
  }
  return lines;
}

type Summary = { us: number; rate: number; rounds: string };
