import { writeReport } from '../../engine/pages/index.ts';
import { soakModule } from '../../runners/capacity/soak/module.ts';
import { soakHealthRows, soakReportModel, soakRuleRows } from '../../runners/capacity/soak/sections.ts';
import { presenter } from '../presenter.ts';

const table = (rows: string[][]) => {
  const w = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((v, c) => v.padStart(w[c]!)).join('  ')).join('\n');
};

/**
 * `npm run bench:soak -- --target replay --duration-sec 600`: one soak, its health table and rule
 * verdicts on stderr, the result (histogram bytes left out) as JSON on stdout with --json, the full
 * result and its HTML report under RESULTS_DIR. Exit 0 on PASS, 1 on FAIL or INCONCLUSIVE, 2 on bad input.
 */
export const soakCli = presenter(soakModule, {
  async report(file, result, command) {
    const html = await writeReport(file, soakReportModel([result], { command })).catch((err: Error) => `not written (${err.message})`);
    const flags = result.validity.flags.length ? `; validity: ${result.validity.flags.map((f) => `${f.code} (${f.severity}): ${f.message}`).join('; ')}` : '';
    return `\n${table(soakHealthRows(result))}\n\n${table(soakRuleRows([result]).map((r) => r.slice(0, 5)))}\n\nverdict: ${String(result.steps[0]?.metrics.verdict)}${flags}\nresults: ${file}\nreport: ${html}\n`;
  },
  // The histogram's bytes are for merging, not for a committed figure file: keep its exact min, max and count.
  jsonView: (result, _file, command) => ({ ...result, command, steps: result.steps.map(({ latencyEncoded, ...s }) => ({ ...s, ...(latencyEncoded ? { latencyEncoded: { ...latencyEncoded, histogram: undefined } } : {}) })) }),
  exitCode: (r) => (r.steps[0]?.pass ? 0 : 1),
  logLine: (l, o) => `[soak ${o.target}] ${l}`,
  progressLine: (p, o) => {
    const x = p as Record<string, unknown>;
    return `[soak ${o.target}] t=${String(x.tSec)}s ${String(x.deliveriesPerSec)}/s p99 ${String(x.p99Ms)} ms subscribed ${String(x.connected)} rig lag ${String(x.rigLagP99Ms)} ms`;
  },
});
