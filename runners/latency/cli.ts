import { runCli } from '../../lib/cli.ts';
import { argvToValues, helpText } from '../../lib/options.ts';
import { withTarget } from '../core/local-target.ts';
import { stamp, writeResults } from '../core/results.ts';
import { getTarget } from '../targets/index.ts';
import { commandLine, reportLine } from '../report/index.ts';
import { LATENCY_OPTIONS, parseLatencyOptions } from './options.ts';
import { runLatency } from './run.ts';

/** `npm run bench:latency -- --target replay --n 1000`. Progress on stderr; JSON on stdout. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:latency -- [options] [--json]\n${helpText(LATENCY_OPTIONS)}\n  --json               the result JSON on stdout (always: bench:latency prints nothing else there)\n`);
    return 0;
  }
  const opts = parseLatencyOptions({ values: argvToValues(argv.filter((a) => a !== '--json'), LATENCY_OPTIONS), env: process.env, origin: 'CLI' });
  const result = await withTarget(getTarget(opts.target), opts.url, (url) => runLatency(opts, url, { log: (l) => process.stderr.write(`[${opts.target}] ${l}\n`) }));
  const file = await writeResults(`latency-${opts.target}-${stamp()}`, result as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  process.stderr.write(await reportLine(file, result, { command: commandLine('bench:latency', LATENCY_OPTIONS, opts) }));
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  return result.validity.valid ? 0 : 2;
}

runCli(main);
