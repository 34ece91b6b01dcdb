import type { RunRecord } from './store.ts';
import type { TestVerdict } from './verdict.ts';

const COLORS: Partial<Record<TestVerdict, string>> = { regress: '31', invalid: '31', failed: '31', drift: '33', missing: '33', ok: '32', improved: '32' };

export const useColor = (env: Record<string, string | undefined> = process.env, tty = process.stdout.isTTY) =>
  env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' ? true : !env.NO_COLOR && Boolean(tty);

function paint(v: TestVerdict, color: boolean, text: string = v.toUpperCase()): string {
  const c = COLORS[v];
  return color && c ? `\x1b[${c}m${text}\x1b[0m` : text;
}

export const cell = (v: unknown) => (v === null || v === undefined ? '-' : typeof v === 'number' ? String(Math.round(v * 1000) / 1000) : String(v));

/** Per test: one row per metric with baseline, measured, delta and verdict; invalid runs say so first. */
export function formatRecords(recs: readonly RunRecord[], color: boolean): string {
  const out: string[] = [];
  for (const r of recs) {
    out.push(`${paint(r.verdict, color)}  ${r.id}  (${r.runner} on ${r.target}, ${r.where}${r.repeat > 1 ? `, ${r.repeat} runs` : ''})`);
    for (const e of r.errors) out.push(`    ${paint(r.verdict, color, r.verdict === 'failed' ? 'failed' : 'invalid')}: ${e}`);
    const rows = r.metrics.map((m) => [m.path, m.direction === 'higher' ? '↑' : '↓', cell(m.baseline), cell(m.measured), m.delta === null ? '-' : `${m.delta > 0 ? '+' : ''}${cell(m.delta)}${m.deltaPct === null ? '' : ` (${m.deltaPct > 0 ? '+' : ''}${m.deltaPct}%)`}`, m.interval ? `[${m.interval[0]}, ${m.interval[1]}]` : '', m.verdict, m.reason]);
    const head = ['metric', 'better', 'baseline', 'measured', 'delta', '95% interval', 'verdict', 'why'];
    const w = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i]!.length)));
    const line = (x: string[], colorIt: boolean) => '    ' + x.map((c, i) => (i === 6 && colorIt ? paint(c as TestVerdict, color, c.padEnd(w[i]!)) : i === x.length - 1 ? c : c.padEnd(w[i]!))).join('  ');
    if (rows.length) {
      out.push(line(head, false));
      for (const x of rows) out.push(line(x, true));
    }
  }
  const count = (v: string) => recs.filter((r) => r.verdict === v).length;
  out.push(`${recs.length} tests: ${['regress', 'invalid', 'failed', 'drift', 'missing', 'new', 'improved', 'ok'].map((v) => `${count(v)} ${v}`).join(', ')}`);
  return out.join('\n') + '\n';
}
