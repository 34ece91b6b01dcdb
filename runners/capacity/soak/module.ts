import { writeReport } from '../../../engine/pages/index.ts';
import { defineModule } from '../../../engine/session/module.ts';
import { getTarget } from '../../../engine/targets/index.ts';
import { checkSoakOptions, SOAK_OPTIONS } from './options.ts';
import { runSoak, soakPlannedMs } from './run.ts';
import { soakHealthRows, soakReportModel, soakRuleRows } from './sections.ts';

const table = (rows: string[][]) => {
  const w = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((v, c) => v.padStart(w[c]!)).join('  ')).join('\n');
};

/**
 * `npm run bench:soak -- --target replay --duration-sec 600`: one soak, its health table and rule
 * verdicts on stderr, the result (histogram bytes left out) as JSON on stdout with --json, the full
 * result and its HTML report under RESULTS_DIR. Exit 0 on PASS, 1 on FAIL or INCONCLUSIVE, 2 on bad input.
 * (The capacity suite runs the same module as `--scenarios soak`.)
 */
export const soakModule = defineModule({
  name: 'soak',
  doc: 'steady traffic for durationSec against one target, a health sample every sampleSec, each pass/fail rule judged over the series (seeds/002)',
  options: SOAK_OPTIONS,
  validate: checkSoakOptions,
  plannedMs: soakPlannedMs,
  target: 'self',
  run: (o, ctx) => runSoak({ target: getTarget(o.target), ...(o.url ? { url: o.url } : {}), seed: 0, signal: ctx.signal, log: ctx.log, progress: ctx.progress }, o),
  cli: {
    usage: '[options] [--json]',
    json: 'flag',
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
  },
});
