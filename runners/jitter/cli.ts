import { runCli } from '../../lib/cli.ts';
import { argvToValues, helpText, parseOptions, type OptionTable } from '../../lib/options.ts';
import { TARGET_NAMES, getTarget } from '../targets/index.ts';
import { withTarget } from '../core/local-target.ts';
import { stamp, writeResults } from '../core/results.ts';
import { JITTER_OPTIONS, parseJitterOptions } from './options.ts';
import { formatProgress, type JitterProgress } from './progress.ts';
import { formatComparison } from './report.ts';
import { runJitter } from './run.ts';
import { runJitterWorkers } from './workers.ts';

/** CLI-only: runner worker processes (the engine's own options stay in JITTER_OPTIONS). */
const CLI_OPTIONS = {
  ...JITTER_OPTIONS,
  workers: { type: 'int', default: 1, min: 1, max: 64, env: ['JITTER_WORKERS'], doc: 'runner worker processes; each runs its share of the clients on <stream>-w<i>, results merged exactly' },
} as const satisfies OptionTable;
import { commandLine, reportLine } from '../report/index.ts';

/** `npm run bench:jitter -- --target <name> [...]`. Progress on stderr; table or `--json` on stdout. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:jitter -- --target <${TARGET_NAMES.join('|')}> [options] [--json]\n${helpText(CLI_OPTIONS)}\n  --json               print only the result JSON on stdout\n`);
    return 0;
  }
  const json = argv.includes('--json');
  const values = argvToValues(argv.filter((a) => a !== '--json'), CLI_OPTIONS);
  const { workers } = parseOptions(CLI_OPTIONS, { values, env: process.env, origin: 'CLI' });
  const { workers: _w, ...engineValues } = values;
  const opts = parseJitterOptions({ values: engineValues, env: process.env, origin: 'CLI' });
  const target = getTarget(opts.target);
  // SIGTERM/SIGINT stop the run, not the process: the partial result is still written, flagged ABORTED.
  const stop = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      process.stderr.write(`[${target.name}] ${sig}: stopping the run; the partial result will be written, flagged ABORTED\n`);
      stop.abort();
    });
  }
  const result = await withTarget(target, opts.url, async (url, svc) => {
    const phase = (name: string, detail: string) => process.stderr.write(`[${target.name}] ${name}: ${detail}\n`);
    const progress = (p: JitterProgress) => process.stderr.write(formatProgress(target.name, p));
    if (workers > 1) return runJitterWorkers(opts, url, workers, { phase, progress, signal: stop.signal, ...(svc ? { targetPid: svc.pid } : {}) });
    const run = runJitter(opts, url, { targetPid: svc?.pid, signal: stop.signal });
    run.events.on('phase', phase);
    run.events.on('progress', progress);
    return run.result;
  });
  const file = await writeResults(`jitter-${target.name}-${stamp()}`, result as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  process.stderr.write(await reportLine(file, result, { command: commandLine('bench:jitter', CLI_OPTIONS, { ...result.params, workers }) }));
  process.stdout.write(json ? JSON.stringify(result, null, 2) + '\n' : formatComparison([result]));
  return result.validity.valid ? 0 : 2;
}

runCli(main);
