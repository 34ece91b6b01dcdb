import { runCli } from '../../lib/cli.ts';
import { argvToValues, helpText } from '../../lib/options.ts';
import { TARGET_NAMES, getTarget } from '../targets/index.ts';
import { withTarget } from '../core/local-target.ts';
import { stamp, writeResults } from '../core/results.ts';
import { JITTER_OPTIONS, parseJitterOptions } from './options.ts';
import { formatProgress } from './progress.ts';
import { formatComparison } from './report.ts';
import { runJitter } from './run.ts';

/** `npm run bench:jitter -- --target <name> [...]`. Progress on stderr; table or `--json` on stdout. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:jitter -- --target <${TARGET_NAMES.join('|')}> [options] [--json]\n${helpText(JITTER_OPTIONS)}\n  --json               print only the result JSON on stdout\n`);
    return 0;
  }
  const json = argv.includes('--json');
  const opts = parseJitterOptions({ values: argvToValues(argv.filter((a) => a !== '--json'), JITTER_OPTIONS), env: process.env, origin: 'CLI' });
  const target = getTarget(opts.target);
  const result = await withTarget(target, opts.url, async (url) => {
    const run = runJitter(opts, url);
    run.events.on('phase', (name, detail) => process.stderr.write(`[${target.name}] ${name}: ${detail}\n`));
    run.events.on('progress', (p) => process.stderr.write(formatProgress(target.name, p)));
    return run.result;
  });
  const file = await writeResults(`jitter-${target.name}-${stamp()}`, result as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  process.stdout.write(json ? JSON.stringify(result, null, 2) + '\n' : formatComparison([result]));
  return result.validity.valid ? 0 : 2;
}

runCli(main);
