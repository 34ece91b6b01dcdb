import { cell } from './table.ts';
import type { History } from './store.ts';

/** Change beyond this share between consecutive runs is a trend worth an arrow (the benchmark's 5%). */
const SIGNIFICANT_PCT = 5;

/**
 * Each test's metrics across its last `last` stored runs: one row per metric, one column per run,
 * then the trend (first to last shown): ↑/↓ when it moved more than 5%, → otherwise, with the
 * direction that is better so a reader sees at once whether it got worse.
 */
export function formatHistory(history: History, o: { last: number; filter: string }): string {
  const ids = historyIds(history, o.filter);
  const out: string[] = [];
  for (const id of ids) {
    const runs = history.filter((h) => h.records.has(id)).slice(-o.last);
    const recs = runs.map((h) => h.records.get(id)!);
    const paths = [...new Set(recs.flatMap((r) => r.metrics.map((m) => m.path)))];
    const head = ['metric', ...runs.map((h) => h.runId.slice(0, 19)), 'trend'];
    const rows = paths.map((p) => {
      const vals = recs.map((r) => (r.valid ? r.metrics.find((m) => m.path === p)?.measured : 'invalid'));
      const dir = recs.map((r) => r.metrics.find((m) => m.path === p)?.direction).find(Boolean) ?? 'higher';
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

/** The test ids FILTER selects (id substrings or runner names), sorted; shared by the table and the --html trends. */
export function historyIds(history: History, filter: string): string[] {
  const parts = filter.split(',').map((s) => s.trim()).filter(Boolean);
  return [...new Set(history.flatMap((h) => [...h.records.keys()]))].filter((id) => !parts.length || parts.some((p) => id.includes(p) || history.some((h) => h.records.get(id)?.runner === p))).sort();
}
