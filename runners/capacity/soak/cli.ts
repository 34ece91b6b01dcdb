import { runCli } from '../../../lib/cli.ts';
import { argvToValues, helpText } from '../../../lib/options.ts';
import { stamp, writeResults } from '../../core/results.ts';
import { writeReport } from '../../report/index.ts';
import { commandLine } from '../../report/command.ts';
import { getTarget } from '../../targets/index.ts';
import type { ScenarioResult } from '../types.ts';
import { SOAK_OPTIONS, parseSoakOptions } from './options.ts';
import { runSoak } from './run.ts';
import { soakHealthRows, soakReportModel, soakRuleRows } from './sections.ts';

/**
 * `npm run bench:soak -- --target replay --duration-sec 600`: one soak, its health table and rule
 * verdicts on stderr, the result (histogram bytes left out) as JSON on stdout with --json, the full
 * result and its HTML report under RESULTS_DIR. Exit 0 on PASS, 1 on FAIL or INCONCLUSIVE, 2 on bad input.
 * (The capacity suite runs the same module as `--scenarios soak`.)
 */
const table = (rows: string[][]) => {
  const w = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((v, c) => v.padStart(w[c]!)).join('  ')).join('\n');
};

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:soak -- [options] [--json]\n${helpText(SOAK_OPTIONS)}\n`);
    return 0;
  }
  const json = argv.includes('--json');
  const values = argvToValues(argv.filter((a) => a !== '--json'), SOAK_OPTIONS);
  const o = parseSoakOptions({ values, env: process.env, origin: 'CLI' });
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const log = (l: string) => process.stderr.write(`[soak ${o.target}] ${l}\n`);
  const result: ScenarioResult = await runSoak(
    {
      target: getTarget(o.target),
      ...(o.url ? { url: o.url } : {}),
      seed: 0,
      signal: ac.signal,
      log,
      progress: (p) => log(`t=${String(p.tSec)}s ${String(p.deliveriesPerSec)}/s p99 ${String(p.p99Ms)} ms subscribed ${String(p.connected)} rig lag ${String(p.rigLagP99Ms)} ms`),
    },
    o,
  );
  const command = commandLine('bench:soak', SOAK_OPTIONS, o);
  const file = await writeResults(`soak-${o.target}-${stamp()}`, result as unknown as Record<string, unknown>);
  const html = await writeReport(file, soakReportModel([result], { command })).catch((err: Error) => `not written (${err.message})`);
  process.stderr.write(`\n${table(soakHealthRows(result))}\n\n${table(soakRuleRows([result]).map((r) => r.slice(0, 5)))}\n\n`);
  process.stderr.write(`verdict: ${String(result.steps[0]?.metrics.verdict)}${result.validity.flags.length ? `; validity: ${result.validity.flags.map((f) => `${f.code} (${f.severity}): ${f.message}`).join('; ')}` : ''}\nresults: ${file}\nreport: ${html}\n`);
  if (json) {
    // The histogram's bytes are for merging, not for a committed figure file: keep its exact min, max and count.
    const steps = result.steps.map(({ latencyEncoded, ...s }) => ({ ...s, ...(latencyEncoded ? { latencyEncoded: { ...latencyEncoded, histogram: undefined } } : {}) }));
    process.stdout.write(JSON.stringify({ ...result, command, steps }, null, 2) + '\n');
  }
  return result.steps[0]?.pass ? 0 : 1;
}

runCli(main);
