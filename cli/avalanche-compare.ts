import { runCli } from '../lib/cli.ts';
import { commandLine, reportLine } from '../engine/pages/index.ts';
import { argvToValues, helpText, parseOptions } from '../lib/options.ts';
import { stamp, writeResults } from '../engine/measure/result-files.ts';
import { AVALANCHE_COMPARE_OPTIONS, compareAvalanche } from '../runners/avalanche/compare.ts';
import { avalancheModule } from '../runners/avalanche/module.ts';
import { formatAvalanche, restartFailureLine } from '../runners/avalanche/table.ts';
import { printedHelp } from './module-cli.ts';

/** `npm run bench:avalanche-all -- --clients 1000 --restart kill [--json]`: every local target side by side. */
async function main(argv: string[]): Promise<number> {
  if (printedHelp(argv, () => `usage: npm run bench:avalanche-all -- [options] [--json]\n${helpText(AVALANCHE_COMPARE_OPTIONS)}\n`)) return 0;
  const json = argv.includes('--json');
  const o = parseOptions(AVALANCHE_COMPARE_OPTIONS, { values: argvToValues(argv.filter((a) => a !== '--json'), AVALANCHE_COMPARE_OPTIONS), env: process.env, origin: 'CLI' });
  const results = await compareAvalanche(o);
  const file = await writeResults(`avalanche-all-${o.restart}-${stamp()}`, results as unknown as Record<string, unknown>[]);
  process.stderr.write(`\nresults: ${file}\n`);
  process.stderr.write(await reportLine(file, results, { command: commandLine('bench:avalanche-all', AVALANCHE_COMPARE_OPTIONS, { ...o }, results[0]?.seed) }, [avalancheModule]));
  for (const r of results) process.stderr.write(restartFailureLine(r) ?? '');
  process.stdout.write(json ? JSON.stringify(results, null, 2) + '\n' : formatAvalanche(results));
  return results.every((r) => r.validity.valid) ? 0 : 2;
}

runCli(main);
