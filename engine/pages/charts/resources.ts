import type { ChartSpec } from '../types.ts';
import { alignTables, colorFor, round } from './common.ts';

/**
 * A target process's memory and CPU over time, when the runner sampled it (e.g. from
 * /proc/<pid>/stat of a local service). `tSec` is seconds since publishing began.
 */
export interface ResourceSeries {
  label: string;
  tSec: readonly number[];
  rssMb: readonly number[];
  /** CPU time used per wall time, % of one core. */
  cpuPct: readonly number[];
}

/** Target memory and CPU, one line per target. */
export function resourceCharts(inputs: readonly ResourceSeries[], xLabel = 'seconds since publishing began'): ChartSpec[] {
  const rows = inputs.filter((r) => r.tSec.length > 0);
  if (rows.length === 0) return [];
  const mk = (id: string, title: string, yLabel: string, note: string, pick: (r: ResourceSeries) => readonly number[]): ChartSpec => {
    const t = alignTables(rows.map((r) => ({ x: r.tSec.map((v) => round(v)), y: pick(r) })));
    return { id, title, note, xLabel, yLabel, x: t.x, series: rows.map((r, i) => ({ label: r.label, values: t.ys[i]!, color: colorFor(inputs.indexOf(r)), width: 2, spanGaps: true, reduce: 'max' as const })) };
  };
  return [
    mk('target-memory', 'Target memory (RSS)', 'MB', 'Resident memory of the target process. Growth after disruptions is session or replay state being kept.', (r) => r.rssMb),
    mk('target-cpu', 'Target CPU', '% of one core', 'CPU of the target process. Spikes right after disruptions are reconnect and replay work.', (r) => r.cpuPct),
  ];
}
