import type { ChartSpec } from '../types.ts';
import { alignTables, colorFor } from './common.ts';

/**
 * Input shape for the capacity runner, which lands later: it raises the client count in steps
 * and measures a metric (e.g. p99 latency) at each step against a budget. One entry per target.
 */
export interface CapacityInput {
  label: string;
  /** The measured metric and its unit, e.g. 'p99 latency', 'ms'. */
  metric: string;
  unit: string;
  budget: number;
  steps: readonly { clients: number; value: number }[];
}

/** Metric per client step with the budget line: the capacity is the last step under the line. */
export function capacityChart(inputs: readonly CapacityInput[]): ChartSpec | null {
  const rows = inputs.filter((c) => c.steps.length > 0);
  if (rows.length === 0) return null;
  const first = rows[0]!;
  const t = alignTables(rows.map((c) => ({ x: c.steps.map((s) => s.clients), y: c.steps.map((s) => s.value) })));
  const budgets = [...new Set(rows.map((c) => c.budget))];
  return {
    id: 'capacity',
    title: `Capacity steps: ${first.metric} against the budget`,
    note: 'Each point is one step of the client count. The capacity is the last step under the dashed budget line.',
    xLabel: 'concurrent clients',
    yLabel: `${first.metric} (${first.unit})`,
    x: t.x,
    series: rows.map((c, i) => ({ label: c.label, values: t.ys[i]!, color: colorFor(inputs.indexOf(c)), width: 2, points: true, spanGaps: true, reduce: 'max' as const })),
    hlines: budgets.map((b) => ({ y: b, label: `budget ${b} ${first.unit}`, color: '#c62828' })),
  };
}
