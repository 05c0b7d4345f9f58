// Big tenants over HTTP: the request shapes of issue 11 (section 5) against the real service, each
// timed alternately with the single-row read `GET /rest/v1/contacts?id=eq.…` so both medians come
// from the same minutes of a shared, noisy machine. Requests are built by @supabase/postgrest-js,
// so query strings and headers are what a dashboard sends, whatever the REST module does inside.

import { performance } from 'node:perf_hooks';
import type { PostgrestClient } from '@supabase/postgrest-js';

export const REPEAT = 21;
const WARMUP = 3;

type Answer = PromiseLike<{ error: unknown; status: number; count?: number | null; data: unknown }>;
export type Shape = { label: string; request: (rest: PostgrestClient) => Answer };
export type Figure = { label: string; median: number; single: number; rows: string };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function timed(rest: PostgrestClient, shape: Shape) {
  const t = performance.now();
  const res = await shape.request(rest);
  const ms = performance.now() - t;
  if (res.error) throw new Error(`${shape.label}: ${res.status} ${JSON.stringify(res.error)}`);
  const n = Array.isArray(res.data) ? res.data.length : 0;
  return { ms, rows: res.count == null ? `${n}` : `${n} of ${res.count}` };
}

/**
 * Each shape's median beside the median of the single-row read, sent interleaved by `baseline` (the
 * tenant: the service role has no index on `id` alone, its primary key leads with the tenant).
 */
export async function measureShapes(
  rest: PostgrestClient,
  shapes: Shape[],
  single: Shape,
  baseline: PostgrestClient = rest,
) {
  const out: Figure[] = [];
  for (const shape of shapes) {
    try {
      for (let i = 0; i < WARMUP; i++) await timed(rest, shape);
      const mine: number[] = [];
      const base: number[] = [];
      let rows = '';
      for (let i = 0; i < REPEAT; i++) {
        base.push((await timed(baseline, single)).ms);
        const r = await timed(rest, shape);
        mine.push(r.ms);
        rows = r.rows;
      }
      out.push({ label: shape.label, median: median(mine), single: median(base), rows });
    } catch (err) {
      // A shape the current REST code refuses is a finding to print, not a reason to stop.
      console.log(`  ${(err as Error).message}`);
      out.push({ label: shape.label, median: Number.NaN, single: Number.NaN, rows: 'error' });
    }
  }
  return out;
}

/** A markdown table, ready to paste into docs/performance.md. */
export function table(title: string, figures: Figure[]) {
  const lines = [
    `\n${title}`,
    '',
    '| request | rows | median | single-row read | cost vs single-row | throughput vs single-row |',
    '|---|---|---|---|---|---|',
  ];
  for (const f of figures) {
    const cost = f.median / f.single;
    lines.push(
      `| ${f.label} | ${f.rows} | ${f.median.toFixed(1)} ms | ${f.single.toFixed(1)} ms | ${cost.toFixed(1)}× | ${(1 / cost).toFixed(2)}× |`,
    );
  }
  console.log(lines.join('\n'));
}

const page = (rest: PostgrestClient, opts?: { count?: 'exact' | 'planned' | 'estimated' }) =>
  rest
    .from('contacts')
    .select('*', opts)
    .order('created_at', { ascending: false })
    .order('id', { ascending: false });

/** The request shapes of the issue, for a tenant whose row at offset 90,000 is `at`. */
export function shapes(at: { created_at: string; id: string }): Shape[] {
  // All of a tenant's rows may share created_at (bench/scale.ts seeds them so), so the cursor
  // after a row is the pair, as a client writes it with or=(…).
  const after = `created_at.lt.${at.created_at},and(created_at.eq.${at.created_at},id.lt.${at.id})`;
  return [
    { label: '`order=created_at.desc,id.desc&limit=25`', request: (r) => page(r).limit(25) },
    {
      label: 'the same, `Prefer: count=exact`',
      request: (r) => page(r, { count: 'exact' }).limit(25),
    },
    {
      label: 'the same, `Prefer: count=planned`',
      request: (r) => page(r, { count: 'planned' }).limit(25),
    },
    {
      label: 'the same, `Prefer: count=estimated`',
      request: (r) => page(r, { count: 'estimated' }).limit(25),
    },
    { label: '`offset=90000&limit=25`', request: (r) => page(r).range(90_000, 90_024) },
    {
      label: 'keyset page after row 90,000 (`or=(created_at.lt…,and(…id.lt…))`)',
      request: (r) => page(r).or(after).limit(25),
    },
    ...textShapes(),
  ];
}

/** The `ilike` shapes, measured again without the trigram indexes. */
export function textShapes(org?: string): Shape[] {
  // As the service role the tenant is a filter of the request; as the tenant, RLS adds it.
  const scoped = (r: PostgrestClient) => {
    const q = page(r);
    return org ? q.eq('organization_id', org) : q;
  };
  const list: Shape[] = [
    {
      label: '`first_name=ilike.*123*` (300 rows match)',
      request: (r) => scoped(r).ilike('first_name', '*123*').limit(25),
    },
    {
      label: '`email=ilike.*c123*` (111 rows match)',
      request: (r) => scoped(r).ilike('email', '*c123*').limit(25),
    },
    {
      label: '`or=(first_name.ilike.*4242*,last_name.ilike.*4242*)`',
      request: (r) => scoped(r).or('first_name.ilike.*4242*,last_name.ilike.*4242*').limit(25),
    },
    {
      label: '`first_name=ilike.*nobody*` (no match)',
      request: (r) => scoped(r).ilike('first_name', '*nobody*').limit(25),
    },
  ];
  return org ? list.map((s) => ({ ...s, label: `service role: ${s.label}` })) : list;
}
