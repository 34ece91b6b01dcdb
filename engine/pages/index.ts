import { writeFile } from 'node:fs/promises';
import { redactUrlCredentials } from '../../lib/redact.ts';
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

/** Any runner's result: `test` names the runner, which picks its page builder. */
export interface RunnerResult {
  readonly test: string;
}

/** A page builder: a test's results (one, or several side by side) to the page's model. */
export type PageBuilder = (results: never[], meta: ReportMeta) => ReportModel;

/**
 * Where the renderer finds a result's builder: the caller's list of named builders, i.e. the
 * runner modules (each declares its `page`) or a transport's own page (the coordinator's
 * `multi-shard`). The renderer knows no runner: a new runner's page comes with its module.
 */
export type PageSource = readonly { readonly name: string; readonly page?: PageBuilder | undefined }[];

export function reportModel(resultOrResults: RunnerResult | readonly RunnerResult[], meta: ReportMeta, pages: PageSource): ReportModel {
  const results = Array.isArray(resultOrResults) ? resultOrResults : [resultOrResults as RunnerResult];
  if (results.length === 0) throw new Error('a report needs at least one result');
  const test = results[0]!.test;
  const build = pages.find((p) => p.name === test)?.page;
  if (!build) throw new Error(`no report builder for results of test "${test}"`);
  return build(results as never[], meta);
}

/** HTML of the report for a result (or several, side by side). */
export function renderReport(resultOrResults: RunnerResult | readonly RunnerResult[], meta: ReportMeta, pages: PageSource): string {
  return renderPage(reportModel(resultOrResults, meta, pages));
}

/** `results/x.json` → `results/x.html`: the runner service serves `<RESULTS_DIR>/<id>.html` by that name. */
export const htmlPathFor = (jsonPath: string) => jsonPath.replace(/\.json$/i, '') + '.html';

/**
 * For CLIs: write the report and return the stderr line. A report that cannot be written is
 * reported, never allowed to fail a run whose results are already on disk.
 */
export async function reportLine(jsonPath: string, resultOrResults: RunnerResult | readonly RunnerResult[], meta: ReportMeta, pages: PageSource): Promise<string> {
  try {
    return `report: ${await writeReport(jsonPath, resultOrResults, meta, pages)}\n`;
  } catch (err) {
    return `report: not written (${(err as Error).message})\n`;
  }
}

/** Write the report next to the result JSON (a built model, or results and where their builder is); returns the HTML path. */
export async function writeReport(jsonPath: string, model: ReportModel): Promise<string>;
export async function writeReport(jsonPath: string, resultOrResults: RunnerResult | readonly RunnerResult[], meta: ReportMeta, pages: PageSource): Promise<string>;
export async function writeReport(jsonPath: string, resultOrResults: RunnerResult | readonly RunnerResult[] | ReportModel, meta?: ReportMeta, pages?: PageSource): Promise<string> {
  const html = 'sections' in resultOrResults && !Array.isArray(resultOrResults) ? renderPage(resultOrResults as ReportModel) : renderReport(resultOrResults as RunnerResult | RunnerResult[], meta ?? { command: '' }, pages ?? []);
  const out = htmlPathFor(jsonPath);
  // Every report (CLI, runner service, coordinator) is written here: no URL credentials in it.
  await writeFile(out, redactUrlCredentials(html));
  return out;
}
