import { runCli } from '../../lib/cli.ts';
import { argvToValues, helpText } from '../../lib/options.ts';
import { withTarget } from '../core/local-target.ts';
import { stamp, writeResults } from '../core/results.ts';
import { getTarget } from '../targets/index.ts';
import { commandLine, reportLine } from '../report/index.ts';
import { WHISPERS_OPTIONS, parseWhispersOptions } from './options.ts';
import { runWhispers } from './run.ts';

/** `npm run bench:whispers -- --target replay --n 200 --rooms 10`. Progress on stderr; JSON on stdout. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:whispers -- [options]\n${helpText(WHISPERS_OPTIONS)}\n`);
    return 0;
  }
  const opts = parseWhispersOptions({ values: argvToValues(argv, WHISPERS_OPTIONS), env: process.env, origin: 'CLI' });
  const result = await withTarget(getTarget(opts.target), opts.url, (url) =>
    runWhispers(opts, url, { log: (l) => process.stderr.write(`${l}\n`), progress: (p) => process.stderr.write(`[${opts.target}] ${p.phase}: connected ${p.connected}, sent ${p.published}, received ${p.received}\n`) }),
  );
  const file = await writeResults(`whispers-${opts.target}-${stamp()}`, result as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  process.stderr.write(await reportLine(file, result, { command: commandLine('bench:whispers', WHISPERS_OPTIONS, opts) }));
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  return result.validity.valid ? 0 : 2;
}

runCli(main);
