import { runCli } from '../lib/cli.ts';
import { parseOptions } from '../lib/options.ts';
import { RUNNER_MODULES } from '../runners/modules.ts';
import { moduleMain } from './module-cli.ts';

const MAIN_OPTIONS = { test: { type: 'enum', values: RUNNER_MODULES.map((m) => m.name), default: RUNNER_MODULES[0]!.name, doc: 'the runner module to run' } } as const;

/**
 * `node --import tsx cli/main.ts <test> [flags]`: any runner module from the module list by its
 * name, with the same flags, output and exit codes as `npm run bench:<test>`; a module without a
 * presenter of its own runs with the CLI's defaults.
 */
runCli(async (argv) => {
  const [test, ...rest] = argv;
  if (test === undefined || test.startsWith('-')) {
    process.stderr.write(`usage: cli/main.ts <${MAIN_OPTIONS.test.values.join('|')}> [flags] (--help after the test lists its flags)\n`);
    return 2;
  }
  const { test: name } = parseOptions(MAIN_OPTIONS, { values: { test }, origin: 'CLI' });
  return moduleMain(RUNNER_MODULES.find((m) => m.name === name)!, rest);
});
