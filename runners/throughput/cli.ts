import { runCli } from '../../lib/cli.ts';
import { argvToValues, helpText } from '../../lib/options.ts';
import { withTarget } from '../core/local-target.ts';
import { stamp, writeResults } from '../core/results.ts';
import { getTarget } from '../targets/index.ts';
import { commandLine, reportLine } from '../report/index.ts';
import { THROUGHPUT_OPTIONS, parseThroughputOptions } from './options.ts';
import { runThroughput } from './run.ts';

/** `npm run bench:throughput -- --target replay --n 1000 --total 100`. Progress on stderr; JSON on stdout. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:throughput -- [options]\n${helpText(THROUGHPUT_OPTIONS)}\n`);
    return 0;
  }
  const opts = parseThroughputOptions({ values: argvToValues(argv, THROUGHPUT_OPTIONS), env: process.env, origin: 'CLI' });
  const result = await withTarget(getTarget(opts.target), opts.url, (url) => runThroughput(opts, url, { log: (l) => process.stderr.write(`[${opts.target}] ${l}\n`) }));
  const file = await writeResults(`throughput-${opts.target}-${stamp()}`, result as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  process.stderr.write(await reportLine(file, result, { command: commandLine('bench:throughput', THROUGHPUT_OPTIONS, opts) }));
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  return result.validity.valid ? 0 : 2;
}

runCli(main);
