import type { ChartSpec } from '../types.ts';
import { colorFor, slug } from './common.ts';

export interface BarItem {
  label: string;
  value: number | null;
  color?: string;
}

/**
 * Named quantities as bars, one per item (x = 1..n, each item its own series so the legend names
 * it): failures by cause, per-shard counts, bytes per connection. Null items have no bar.
 */
export function barChart(o: { id: string; title: string; note: string; yLabel: string; items: readonly BarItem[] }): ChartSpec | null {
  const items = o.items.filter((i) => i.value !== null);
  if (items.length === 0) return null;
  // Bars start at zero: an axis starting near the smallest value would make 5 vs 8 look like 1 vs 10.
  const vals = items.map((i) => i.value!);
  const lo = Math.min(0, ...vals) * 1.1;
  const hi = Math.max(0, ...vals) * 1.1;
  return {
    yRange: [lo, hi > lo ? hi : lo + 1],
    id: slug(o.id),
    title: o.title,
    note: o.note,
    xLabel: items.map((it, k) => `${k + 1} = ${it.label}`).join(', '),
    xIntegers: true,
    yLabel: o.yLabel,
    // Empty slots at 0 and n+1 keep the outer bars whole (the x range is the data's range).
    x: [0, ...items.map((_, k) => k + 1), items.length + 1],
    series: items.map((it, k) => ({ label: it.label, values: [null, ...items.map((_, j) => (j === k ? it.value : null)), null], color: it.color ?? colorFor(k), bars: true, reduce: 'max' as const })),
  };
}
