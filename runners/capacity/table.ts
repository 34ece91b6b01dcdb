import { markdownTable } from '../../engine/pages/markdown.ts';
import type { CapacityRun } from './run.ts';
import type { ScenarioResult } from './types.ts';

/**
 * The suite's tables: a side-by-side summary with ratios against the first target (seeds/000
 * Table 7), one table per scenario with its steps, validity flags, and the lines saying what
 * the figures do not show. Rows are string[][] (first row the header) for the text and the report.
 */
const fmt = (v: unknown): string => {
  if (v === null || v === undefined) return 'n/a';
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 2 });
  return String(v);
};
const shortMode = (r: ScenarioResult | undefined) => (r?.failureMode ? r.failureMode.split(':')[0]! : 'n/a');

export function summaryRows(run: CapacityRun): string[][] {
  const [first, ...others] = run.targets;
  const header = ['Metric', ...run.targets, 'Best', ...others.map((t) => `${first}/${t}`)];
  const rows: string[][] = [header];
  for (const id of run.scenarios) {
    const byTarget = run.targets.map((t) => run.results.find((r) => r.scenario === id && r.target === t));
    const h = byTarget.find((r) => r)?.headline;
    if (!h) continue;
    const values = byTarget.map((r) => (r?.headline.value ?? null) as number | null);
    const shown = byTarget.map((r, i) => (values[i] === null ? `n/a (${shortMode(r)})` : `${fmt(values[i])}${r && !r.validity.valid ? ' (invalid)' : ''}`));
    const valid = values.map((v, i) => (v !== null && byTarget[i]?.validity.valid ? v : null));
    const cands = valid.map((v, i) => ({ v, t: run.targets[i]! })).filter((x): x is { v: number; t: string } => x.v !== null);
    const top = cands.length ? cands.reduce((a, b) => ((h.higherIsBetter ? b.v > a.v : b.v < a.v) ? b : a)) : undefined;
    const best = !top ? 'n/a' : cands.filter((c) => c.v === top.v).length > 1 ? `tie (${cands.filter((c) => c.v === top.v).map((c) => c.t).join(', ')})` : top.t;
    const ratios = valid.slice(1).map((b) => (valid[0] != null && b ? (valid[0] / b).toFixed(2) : 'n/a'));
    rows.push([`${id}: ${h.name} (${h.unit}, ${h.higherIsBetter ? 'higher' : 'lower'} better)`, ...shown, best, ...ratios]);
    if (byTarget.some((r) => r?.failureMode && r.failureMode !== 'none')) rows.push([`${id}: what stopped it`, ...byTarget.map((r) => shortMode(r)), '', ...others.map(() => '')]);
  }
  return rows;
}

/** One scenario's steps for every target: the step's keys, pass, its metrics, the reason. */
export function stepRows(run: CapacityRun, id: string): string[][] {
  const results = run.results.filter((r) => r.scenario === id);
  const stepKeys = [...new Set(results.flatMap((r) => r.steps.flatMap((s) => Object.keys(s.step))))];
  const metricKeys = [...new Set(results.flatMap((r) => r.steps.flatMap((s) => Object.keys(s.metrics))))].filter((k) => k !== 'failureMode');
  const latency = results.some((r) => r.steps.some((s) => s.latency));
  const ledger = results.some((r) => r.steps.some((s) => s.ledger));
  const header = ['target', ...stepKeys, 'pass', ...metricKeys, ...(ledger ? ['delivered', 'lost', 'dup'] : []), ...(latency ? ['p50 ms', 'p99 ms', 'max ms'] : []), 'reason'];
  const rows: string[][] = [header];
  for (const r of results) {
    if (r.steps.length === 0) rows.push([r.target, ...stepKeys.map(() => ''), 'no', ...metricKeys.map(() => ''), ...(ledger ? ['', '', ''] : []), ...(latency ? ['', '', ''] : []), r.failureMode ?? 'no steps']);
    for (const s of r.steps) {
      const l = s.ledger;
      const lat = s.latency?.latencyRawMs;
      rows.push([
        r.target,
        ...stepKeys.map((k) => fmt(s.step[k])),
        s.pass ? 'yes' : 'no',
        ...metricKeys.map((k) => fmt(s.metrics[k])),
        ...(ledger ? [l ? `${l.receivedDeliveries}/${l.expectedDeliveries}` : 'n/a', fmt(l?.lostDeliveries), fmt(l?.duplicates)] : []),
        ...(latency ? [fmt(lat?.p50), fmt(lat?.p99), fmt(lat?.max)] : []),
        s.reason ?? '',
      ]);
    }
  }
  return rows;
}

/** Every line of "what this does not show": the suite's, then each scenario's (deduplicated). */
export function notShownLines(run: CapacityRun): string[] {
  return [...new Set([...run.notShown, ...run.results.flatMap((r) => r.notShown.map((n) => `${r.scenario}: ${n}`))])].filter((l, _, all) => !all.some((o) => o !== l && l.endsWith(`: ${o}`)));
}

/** The whole text output of `npm run bench:capacity` (without --json). */
export function renderText(run: CapacityRun): string {
  const out = [`capacity ${run.startedAt} targets=${run.targets.join(',')} scenarios=${run.scenarios.join(',')} seed=${run.seed} loadavg=${run.machine.loadavgAtStart.join(',')} → ${run.machine.loadavgAtEnd.join(',')}`, '', '## Summary (ratios against the first target, same run)', '', markdownTable(summaryRows(run))];
  for (const id of run.scenarios) {
    const title = run.results.find((r) => r.scenario === id)?.title ?? id;
    out.push('', `## ${title}`, '', markdownTable(stepRows(run, id)));
    for (const r of run.results.filter((x) => x.scenario === id)) {
      if (r.failureMode) out.push(`- ${r.target}: ${r.failureMode}`);
      for (const f of r.validity.flags) out.push(`- ${r.target} ${f.severity} ${f.code}: ${f.message}`);
    }
  }
  out.push('', '## What these figures do not show', '', ...notShownLines(run).map((l) => `- ${l}`), '');
  return out.join('\n');
}
