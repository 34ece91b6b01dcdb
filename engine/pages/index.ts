import { writeFile } from 'node:fs/promises';
import { redactUrlCredentials } from '../../lib/redact.ts';
import { capacityReport } from '../../runners/capacity/page.ts';
import { jitterReport } from './jitter.ts';
import { avalancheReport, deployImpactReport } from '../../runners/avalanche/page.ts';
import { latencyReport, throughputReport, whispersReport } from './delivery.ts';
import { idleReport } from './idle.ts';
import { multiShardReport } from './multi-shard.ts';
import { renderPage } from './page.ts';
import { trendReport } from './trend.ts';
import type { ReportMeta, ReportModel } from './types.ts';

export { commandLine } from './command.ts';
export { capacityChart } from './charts/capacity.ts';
export { herdChart, type HerdInput } from './charts/herd.ts';
export { resourceCharts } from './charts/resources.ts';
export { trendChart, type TrendInput } from './charts/trend.ts';
export { renderPage, trendReport };
export type { ChartSpec, ReportMeta, ReportModel } from './types.ts';

/** Any runner's result: `test` names the runner, which picks its report builder. */
export interface RunnerResult {
  readonly test: string;
}

/**
 * One builder per runner. A new runner registers here with a function from its results to a
 * ReportModel (its charts), and gets the page, the banner and the file for free.
 */
const BUILDERS: Record<string, (results: never[], meta: ReportMeta) => ReportModel> = {
  jitter: jitterReport,
  avalanche: avalancheReport,
  'deploy-impact': deployImpactReport,
  idle: idleReport,
  latency: latencyReport,
  throughput: throughputReport,
  whispers: whispersReport,
  capacity: capacityReport,
  // The coordinator's merged JSON names its test `testType`; it is passed tagged `test: 'multi-shard'`.
  'multi-shard': multiShardReport,
};

export function reportModel(resultOrResults: RunnerResult | readonly RunnerResult[], meta: ReportMeta): ReportModel {
  const results = Array.isArray(resultOrResults) ? resultOrResults : [resultOrResults as RunnerResult];
  if (results.length === 0) throw new Error('a report needs at least one result');
  const test = results[0]!.test;
  const build = BUILDERS[test];
  if (!build) throw new Error(`no report builder for results of test "${test}"`);
  return build(results as never[], meta);
}

/** HTML of the report for a result (or several, side by side). */
export function renderReport(resultOrResults: RunnerResult | readonly RunnerResult[], meta: ReportMeta): string {
  return renderPage(reportModel(resultOrResults, meta));
}

/** `results/x.json` → `results/x.html`: the runner service serves `<RESULTS_DIR>/<id>.html` by that name. */
export const htmlPathFor = (jsonPath: string) => jsonPath.replace(/\.json$/i, '') + '.html';

/**
 * For CLIs: write the report and return the stderr line. A report that cannot be written is
 * reported, never allowed to fail a run whose results are already on disk.
 */
export async function reportLine(jsonPath: string, resultOrResults: RunnerResult | readonly RunnerResult[], meta: ReportMeta): Promise<string> {
  try {
    return `report: ${await writeReport(jsonPath, resultOrResults, meta)}\n`;
  } catch (err) {
    return `report: not written (${(err as Error).message})\n`;
  }
}

/** Write the report next to the result JSON; returns the HTML path. */
export async function writeReport(jsonPath: string, resultOrResults: RunnerResult | readonly RunnerResult[] | ReportModel, meta?: ReportMeta): Promise<string> {
  const html = 'sections' in resultOrResults && !Array.isArray(resultOrResults) ? renderPage(resultOrResults as ReportModel) : renderReport(resultOrResults as RunnerResult | RunnerResult[], meta ?? { command: '' });
  const out = htmlPathFor(jsonPath);
  // Every report (CLI, runner service, coordinator) is written here: no URL credentials in it.
  await writeFile(out, redactUrlCredentials(html));
  return out;
}
