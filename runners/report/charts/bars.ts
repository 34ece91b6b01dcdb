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
  return {
    id: slug(o.id),
    title: o.title,
    note: o.note,
    xLabel: items.map((it, k) => `${k + 1} = ${it.label}`).join(', '),
    xIntegers: true,
    yLabel: o.yLabel,
    x: items.map((_, k) => k + 1),
    series: items.map((it, k) => ({ label: it.label, values: items.map((_, j) => (j === k ? it.value : null)), color: it.color ?? colorFor(k), bars: true, reduce: 'max' as const })),
  };
}
