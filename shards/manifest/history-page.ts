import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderPage, trendReport, type ReportMeta, type TrendInput } from '../../engine/pages/index.ts';
import { historyIds } from './history.ts';
import type { History } from './store.ts';

/**
 * One trend per (test, metric) over the last `last` stored runs: the measured value, the
 * baseline in force at that run, drift/regress marked. Invalid or failed runs have no value
 * to draw and are left out of that metric's line (the text table still shows them).
 */
export function historyTrends(history: History, o: { last: number; filter: string }): TrendInput[] {
  const out: TrendInput[] = [];
  for (const id of historyIds(history, o.filter)) {
    const runs = history.filter((h) => h.records.has(id)).slice(-o.last);
    const recs = runs.map((h) => h.records.get(id)!);
    for (const path of [...new Set(recs.flatMap((r) => r.metrics.map((m) => m.path)))]) {
      const points = recs.flatMap((r) => {
        const m = r.metrics.find((x) => x.path === path);
        if (!r.valid || !m || typeof m.measured !== 'number') return [];
        const verdict = m.verdict === 'drift' || m.verdict === 'regress' ? m.verdict : ('ok' as const);
        return [{ label: `${r.runId.slice(0, 19)}${r.commit ? ` ${r.commit.slice(0, 7)}` : ''}`, value: m.measured, ...(typeof m.baseline === 'number' ? { baseline: m.baseline } : {}), verdict }];
      });
      const dir = recs.map((r) => r.metrics.find((m) => m.path === path)?.direction).find(Boolean) ?? 'higher';
      out.push({ metric: `${id} ${path}`, unit: `${dir} is better`, runs: points });
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
