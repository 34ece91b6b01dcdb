import type { ChartSpec } from '../types.ts';
import { slug } from './common.ts';

/**
 * One metric across recorded runs, for the rebaseline history report
 * (`bench:rebaseline:history -- --html`, which lands later). Runs in chronological order.
 */
export interface TrendInput {
  metric: string;
  unit: string;
  runs: readonly {
    /** Short label: commit or date. */
    label: string;
    value: number;
    /** The manifest's baseline at that run, if any. */
    baseline?: number;
    /** The rebaseline verdict for that run. */
    verdict?: 'ok' | 'drift' | 'regress';
  }[];
}

const VERDICT_COLORS = { drift: '#ef6c00', regress: '#c62828' } as const;

/** A metric over runs (x = run number), the baseline dashed, drift and regress runs marked. */
export function trendChart(input: TrendInput): ChartSpec | null {
  if (input.runs.length === 0) return null;
  const hasBaseline = input.runs.some((r) => r.baseline !== undefined);
  return {
    id: `trend-${slug(input.metric)}`,
    title: `${input.metric} over runs`,
    note: `${input.runs.length === 1 ? `One run so far (${input.runs[0]!.label}).` : `Run 1 is the oldest (${input.runs[0]!.label}), run ${input.runs.length} the newest (${input.runs.at(-1)!.label}).`} Red marks regressions, orange drift.`,
    xLabel: 'run number (oldest first)',
    xIntegers: true,
    // The metric is in the title: a "<test id> <metric path>" y label ran past the chart's height.
    yLabel: `value (${input.unit})`,
    x: input.runs.map((_, i) => i + 1),
    series: [
      { label: input.metric, values: input.runs.map((r) => r.value), color: '#0072B2', width: 2, points: true, reduce: 'max' },
      ...(hasBaseline ? [{ label: 'baseline', values: input.runs.map((r) => r.baseline ?? null), color: '#555555', dash: [6, 4], spanGaps: true, reduce: 'mean' as const }] : []),
    ],
    markers: input.runs.flatMap((r, i) => (r.verdict === 'drift' || r.verdict === 'regress' ? [{ x: i + 1, label: `${r.verdict} ${r.label}`, color: VERDICT_COLORS[r.verdict] }] : [])),
  };
}
