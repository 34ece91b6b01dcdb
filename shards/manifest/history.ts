import { cell } from './table.ts';
import type { History, RunRecord } from './store.ts';

/** Change beyond this share between consecutive runs is a trend worth an arrow (the benchmark's 5%). */
const SIGNIFICANT_PCT = 5;

/**
 * Each test's metrics across its last `last` stored runs: one row per metric, one column per run,
 * then the trend (first to last shown): ↑/↓ when it moved more than 5%, → otherwise, with the
 * direction that is better so a reader sees at once whether it got worse.
 */
export function formatHistory(history: History, o: { last: number; filter: string }): string {
  const out: string[] = [];
  for (const { id, runs, recs, paths } of historyRuns(history, o)) {
    const head = ['metric', ...runs.map((h) => h.runId.slice(0, 19)), 'trend'];
    const rows = paths.map((p) => {
      const vals = recs.map((r) => (r.valid ? r.metrics.find((m) => m.path === p)?.measured : 'invalid'));
      const dir = directionOf(recs, p);
      const nums = vals.filter((v): v is number => typeof v === 'number');
      let trend = '→';
      if (nums.length >= 2) {
        const a = nums[0]!;
        const b = nums.at(-1)!;
        const pct = a === 0 ? (b === 0 ? 0 : Infinity) : ((b - a) / Math.abs(a)) * 100;
        if (Math.abs(pct) > SIGNIFICANT_PCT) trend = `${b > a ? '↑' : '↓'} ${Number.isFinite(pct) ? `${pct > 0 ? '+' : ''}${Math.round(pct * 10) / 10}%` : 'from 0'} (${(b > a) === (dir === 'higher') ? 'better' : 'worse'})`;
      } else trend = nums.length ? '· one run' : '-';
      return [p, ...vals.map(cell), trend];
    });
    const w = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i]!.length)));
    out.push(`${id} (${recs.at(-1)!.runner} on ${recs.at(-1)!.target}), last ${runs.length} runs; verdicts: ${recs.map((r) => r.verdict).join(' ')}`);
    for (const x of [head, ...rows]) out.push('  ' + x.map((c, i) => (i === x.length - 1 ? c : c.padEnd(w[i]!))).join('  '));
  }
  return out.join('\n') + (out.length ? '\n' : '');
}

/**
 * The tests FILTER selects (id substrings or runner names), sorted, each with its last `last` stored
 * runs, their records and every metric path they judged; shared by the table and the --html trends.
 */
export function historyRuns(history: History, o: { last: number; filter: string }) {
  const parts = o.filter.split(',').map((s) => s.trim()).filter(Boolean);
  const ids = [...new Set(history.flatMap((h) => [...h.records.keys()]))].filter((id) => !parts.length || parts.some((p) => id.includes(p) || history.some((h) => h.records.get(id)?.runner === p))).sort();
  return ids.map((id) => {
    const runs = history.filter((h) => h.records.has(id)).slice(-o.last);
    const recs = runs.map((h) => h.records.get(id)!);
    return { id, runs, recs, paths: [...new Set(recs.flatMap((r) => r.metrics.map((m) => m.path)))] };
  });
}

/** Which way a metric is better, as the first of its records that judged it says. */
export const directionOf = (recs: readonly RunRecord[], path: string) => recs.map((r) => r.metrics.find((m) => m.path === path)?.direction).find(Boolean) ?? 'higher';
