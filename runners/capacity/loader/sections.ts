import { barChart } from '../../../engine/pages/charts/bars.ts';
import { latencyCdfCharts } from '../../../engine/pages/charts/latency.ts';
import type { ChartSpec, Section } from '../../../engine/pages/types.ts';
import type { ScenarioResult } from '../types.ts';

/** A fixed-load latency snapshot per target: the CDF from the merged histogram, p99 and server CPU as bars. */
export function latencyTableSection(results: readonly ScenarioResult[], title: string): Section {
  const withHist = results.map((r) => ({ label: r.target, latency: r.steps[0]?.latencyEncoded })).filter((x): x is { label: string; latency: NonNullable<typeof x.latency> } => x.latency !== undefined);
  const num = (r: ScenarioResult, k: string) => (typeof r.steps[0]?.metrics[k] === 'number' ? (r.steps[0]!.metrics[k] as number) : null);
  const charts = [
    ...latencyCdfCharts(withHist, 's5-latency').slice(0, 1),
    barChart({ id: 's5-p99', title: 'p99 latency at fixed load', note: 'Over every delivery of the window, merged exactly across loaders.', yLabel: 'ms', items: results.map((r) => ({ label: r.target, value: num(r, 'p99Ms') })) }),
    barChart({ id: 's5-cpu', title: 'Server CPU at fixed load', note: 'Mean over the window, % of one core (all of the target’s processes).', yLabel: '% of one core', items: results.map((r) => ({ label: r.target, value: num(r, 'serverCpuPct') })) }),
  ].filter((c): c is ChartSpec => c !== null);
  return { title, intro: 'One publish rate held for the window: p50/p99/p99.9/max over every delivery and the server CPU it cost.', charts, ...(charts.length ? {} : { omitted: ['no deliveries were measured'] }) };
}
