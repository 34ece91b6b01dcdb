import { runCli } from '../../lib/cli.ts';
import { argvToValues, helpText, type OptionTable } from '../../lib/options.ts';
import { stamp, writeResults } from '../core/results.ts';
import { commandLine, reportLine } from '../report/index.ts';
import { CAPACITY_OPTIONS, parseCapacityOptions } from './options.ts';
import { runCapacity } from './run.ts';
import { renderText } from './table.ts';

/** CLI-only: `--json` prints the result alone (for docs/results/measure.sh); progress always goes to stderr. */
export const CAPACITY_CLI_OPTIONS: OptionTable = { ...CAPACITY_OPTIONS, json: { type: 'bool', default: false, doc: 'print only the result JSON on stdout (tables go nowhere)' } };

/** `npm run bench:capacity -- --targets replay,ws,socketio [--scenarios S1,S3] [--json]`. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:capacity -- --targets replay,ws,socketio [--scenarios S1,S3] [--json] [options]\n${helpText(CAPACITY_CLI_OPTIONS)}\n`);
    return 0;
  }
  const values = argvToValues(argv, CAPACITY_CLI_OPTIONS);
  const json = values.json === true || values.json === 'true' || values.json === '1';
  const opts = parseCapacityOptions({ values, env: process.env, origin: 'CLI', passthrough: ['json'] });
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  process.once('SIGTERM', () => abort.abort());
  const run = await runCapacity(opts, {
    signal: abort.signal,
    log: (l) => process.stderr.write(`${l}\n`),
    progress: (p) => process.stderr.write(`[${String(p.scenario)} ${String(p.target)}] ${JSON.stringify(p)}\n`),
  });
  const file = await writeResults(`capacity-${opts.targets.join('-')}-${stamp()}`, run as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  process.stderr.write(await reportLine(file, run, { command: commandLine('bench:capacity', CAPACITY_OPTIONS, { ...opts.values, targets: opts.targets.join(','), scenarios: opts.scenarios.join(',') }) }));
  process.stdout.write(json ? JSON.stringify(run) + '\n' : renderText(run));
  return 0;
}

runCli(main);
