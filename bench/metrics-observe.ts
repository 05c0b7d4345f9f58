// What the request histogram costs a request (src/platform/metrics/request-durations.ts), beside
// prom-client's own Histogram.observe(labels, value) with the same labels, in the same run: both
// fed the labels a cached /rest/v1 read has (three tables in turn, GET, 200), after a warm-up.
// Prints ns per observation and the ratio; the performance.now() both include is measured alone
// beside them. Never fails on a figure. BENCH_OBSERVATIONS (default 2,000,000).
import { Histogram, Registry } from 'prom-client';
import { requestDurations } from '../src/platform/metrics/request-durations.ts';

const N = Number(process.env.BENCH_OBSERVATIONS ?? 2_000_000);
const tables = ['contacts', 'orders', 'products'];
const ours = requestDurations();
const theirs = new Histogram({
  name: 'bench_seconds',
  help: 'bench',
  labelNames: ['route', 'target', 'method', 'status'],
  registers: [new Registry()],
});
const started = performance.now();
let sink = 0;

function nsPer(f: (i: number) => void): number {
  for (let i = 0; i < N / 4; i++) f(i);
  const t = performance.now();
  for (let i = 0; i < N; i++) f(i);
  return ((performance.now() - t) * 1e6) / N;
}

const clock = nsPer(() => {
  sink += performance.now();
});
const own = nsPer((i) => ours.observe('/rest/v1/:table', tables[i % 3] as string, 'GET', 200, started));
const prom = nsPer((i) =>
  theirs.observe(
    { route: '/rest/v1/:table', target: tables[i % 3] as string, method: 'GET', status: 200 },
    (performance.now() - started) / 1000,
  ),
);
console.log(`performance.now() alone: ${clock.toFixed(0)} ns`);
console.log(`request-durations.ts observe: ${own.toFixed(0)} ns`);
console.log(`prom-client Histogram.observe(labels): ${prom.toFixed(0)} ns`);
console.log(`ratio (ours / prom-client): ${(own / prom).toFixed(2)}×${sink > 0 ? '' : ' '}`);
