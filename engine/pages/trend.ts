import { trendChart, type TrendInput } from './charts/trend.ts';
import type { ReportMeta, ReportModel } from './types.ts';
import { reportHead } from './validity.ts';

/** A trend report: one chart per metric over recorded runs (for `bench:rebaseline:history -- --html`). */
export function trendReport(title: string, metrics: readonly TrendInput[], meta: ReportMeta): ReportModel {
  const charts = metrics.map(trendChart).filter((c) => c !== null);
  return {
    title,
    subtitle: `${metrics.length} metrics over up to ${Math.max(0, ...metrics.map((m) => m.runs.length))} runs`,
    ...reportHead(meta, null, null),
    verdicts: [],
    summary: [],
    sections: [{ title: 'Metrics over runs', charts, omitted: metrics.filter((m) => m.runs.length === 0).map((m) => `${m.metric}: no recorded runs.`) }],
  };
}
