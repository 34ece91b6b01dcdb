import type { ChartSpec, Reduce } from './types.ts';

/** Points per series drawn: more than a chart's pixel width gains nothing and costs bytes and render time. */
const MAX_DRAWN_POINTS = 1200;

const finite = (v: number | null): v is number => v !== null && Number.isFinite(v);

function reduce(vals: (number | null)[], how: Reduce): number | null {
  const xs = vals.filter(finite);
  if (xs.length === 0) return null;
  return how === 'mean' ? xs.reduce((a, b) => a + b, 0) / xs.length : how === 'min' ? Math.min(...xs) : Math.max(...xs);
}

/**
 * Drawing copy of a chart with at most `max` points per series: consecutive x values are
 * binned and each series keeps the extreme it cares about (a dip in delivery, a peak in
 * latency), so nothing a reader must see disappears. The result's numbers are never touched.
 */
export function downsampleChart(spec: ChartSpec, max = MAX_DRAWN_POINTS): ChartSpec {
  const n = spec.x.length;
  if (n <= max) return spec;
  const per = Math.ceil(n / max);
  const x: number[] = [];
  const cols = spec.series.map(() => [] as (number | null)[]);
  for (let start = 0; start < n; start += per) {
    const end = Math.min(n, start + per);
    x.push(spec.x[start]!);
    spec.series.forEach((s, i) => cols[i]!.push(reduce(s.values.slice(start, end), s.reduce ?? 'mean')));
  }
  return { ...spec, x, series: spec.series.map((s, i) => ({ ...s, values: cols[i]! })), note: `${spec.note} (Drawn from ${n} points binned to ${x.length}.)` };
}

/** Finite, non-null y values across all series: what the page reports as the chart's data points. */
export function countPoints(spec: ChartSpec): number {
  return spec.series.flatMap((s) => s.values).filter(finite).length;
}
