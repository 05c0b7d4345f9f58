/**
 * The request duration histogram (`svc_http_request_duration_seconds`), kept without allocating
 * on the request's path: prom-client's `observe(labels, value)` copies the labels and builds a
 * string key from them on every call, and the /rest/v1 path is benchmarked against a bare server
 * (bench:rest). Here a request walks four Maps keyed by values it already holds (the route
 * template and target are constants or names already in the schema cache, the method is Node's
 * own string, the status a number) to its cell, and adds to numbers in place. Only a label set
 * seen for the first time allocates its cell. prom-client's registry formats it like any other
 * metric at scrape time (`get()` answers what its Histogram's does).
 *
 * Label values must be bounded by the caller: `route` is a template (`/rest/v1/:table`), never a
 * raw path; `target` a known table, function or tool name, `other`, or '' where the route has none.
 */

/** Seconds; Prometheus' client defaults, with 2.5 ms below them for cached reads. */
export const DURATION_BUCKETS = [0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Cell = { counts: Float64Array; sum: number; count: number };
type ByStatus = Map<number, Cell>;
type ByMethod = Map<string, ByStatus>;
type ByTarget = Map<string, ByMethod>;

export type RequestDurations = {
  /** One answered request; `started` is its `performance.now()` at arrival. */
  observe(route: string, target: string, method: string, status: number, started: number): void;
  /** The metric as prom-client's registry reads it (registerMetric). */
  readonly name: string;
  get(): Promise<{ name: string; help: string; type: 'histogram'; values: Value[]; aggregator: 'sum' }>;
};

type Value = { metricName: string; labels: Record<string, string | number>; value: number };

export function requestDurations(name = 'svc_http_request_duration_seconds'): RequestDurations {
  const byRoute = new Map<string, ByTarget>();
  const cellOf = (route: string, target: string, method: string, status: number): Cell => {
    let targets = byRoute.get(route);
    if (!targets) {
      targets = new Map();
      byRoute.set(route, targets);
    }
    let methods = targets.get(target);
    if (!methods) {
      methods = new Map();
      targets.set(target, methods);
    }
    let statuses = methods.get(method);
    if (!statuses) {
      statuses = new Map();
      methods.set(method, statuses);
    }
    let cell = statuses.get(status);
    if (!cell) {
      cell = { counts: new Float64Array(DURATION_BUCKETS.length), sum: 0, count: 0 };
      statuses.set(status, cell);
    }
    return cell;
  };
  return {
    name,
    observe(route, target, method, status, started) {
      const seconds = (performance.now() - started) / 1000;
      const cell = cellOf(route, target, method, status);
      cell.sum += seconds;
      cell.count++;
      // The first bucket that holds it; the cumulative counts are summed at scrape time.
      for (let i = 0; i < DURATION_BUCKETS.length; i++) {
        if (seconds <= (DURATION_BUCKETS[i] as number)) {
          (cell.counts[i] as number)++;
          break;
        }
      }
    },
    async get() {
      const values: Value[] = [];
      for (const [route, targets] of byRoute)
        for (const [target, methods] of targets)
          for (const [method, statuses] of methods)
            for (const [status, cell] of statuses) {
              const labels = { route, target, method, status };
              let cumulative = 0;
              DURATION_BUCKETS.forEach((le, i) => {
                cumulative += cell.counts[i] as number;
                values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative });
              });
              values.push({
                metricName: `${name}_bucket`,
                labels: { ...labels, le: '+Inf' },
                value: cell.count,
              });
              values.push({ metricName: `${name}_sum`, labels, value: cell.sum });
              values.push({ metricName: `${name}_count`, labels, value: cell.count });
            }
      return {
        name,
        help: 'Time from a request arriving to its answer, by route template, target, method and status',
        type: 'histogram',
        values,
        aggregator: 'sum',
      };
    },
  };
}
