import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderPage, trendReport, type ReportMeta, type TrendInput } from '../../engine/pages/index.ts';
import { directionOf, historyRuns } from './history.ts';
import type { History } from './store.ts';

/**
 * One trend per (test, metric) over the last `last` stored runs: the measured value, the
 * baseline in force at that run, drift/regress marked. Invalid or failed runs have no value
 * to draw and are left out of that metric's line (the text table still shows them).
 */
export function historyTrends(history: History, o: { last: number; filter: string }): TrendInput[] {
  const out: TrendInput[] = [];
  for (const { id, recs, paths } of historyRuns(history, o)) {
    for (const path of paths) {
      const points = recs.flatMap((r) => {
        const m = r.metrics.find((x) => x.path === path);
        if (!r.valid || !m || typeof m.measured !== 'number') return [];
        const verdict = m.verdict === 'drift' || m.verdict === 'regress' ? m.verdict : ('ok' as const);
        return [{ label: `${r.runId.slice(0, 19)}${r.commit ? ` ${r.commit.slice(0, 7)}` : ''}`, value: m.measured, ...(typeof m.baseline === 'number' ? { baseline: m.baseline } : {}), verdict }];
      });
      out.push({ metric: `${id} ${path}`, unit: `${directionOf(recs, path)} is better`, runs: points });
    }
  }
  return out;
}

/** `bench:rebaseline:history -- --html`: the trend page, `<outputDir>/history.html`. Returns its path. */
export async function writeHistoryReport(outputDir: string, history: History, o: { last: number; filter: string }, meta: ReportMeta): Promise<string> {
  const model = trendReport(`Rebaseline history${o.filter ? ` (${o.filter})` : ''}: last ${o.last} runs`, historyTrends(history, o), meta);
  await mkdir(outputDir, { recursive: true });
  const file = join(outputDir, 'history.html');
  await writeFile(file, renderPage(model));
  return file;
}
