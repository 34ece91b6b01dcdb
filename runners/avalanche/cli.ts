import { runCli } from '../../lib/cli.ts';
import { commandLine, reportLine } from '../report/index.ts';
import { argvToValues, helpText } from '../../lib/options.ts';
import { stamp, writeResults } from '../core/results.ts';
import { TARGET_NAMES } from '../targets/index.ts';
import { AVALANCHE_OPTIONS, parseAvalancheOptions, restartConfigFromEnv } from './options.ts';
import { formatAvalanche, reportRestartFailure } from './report.ts';
import { runAvalanche } from './run.ts';

const ENV_HELP = `  restart configuration (environment only, never from a request):
    AVALANCHE_RESTART_COMMAND      shell command for --restart command (gets REBOUND_TARGET_URLS, REBOUND_TARGET_PIDS)
    AVALANCHE_RESTART_HOOK_URL     URL POSTed for --restart hook; AVALANCHE_RESTART_HOOK_TOKEN: its bearer
    AVALANCHE_RESTART_TIMEOUT_MS   give up on the command or hook after this long (default 120000)`;

/** `npm run bench:avalanche -- --target <name> --restart kill|term|rolling|command|hook --clients N [--json]`. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:avalanche -- --target <${TARGET_NAMES.join('|')}> --restart <mode> [options] [--json]\n${helpText(AVALANCHE_OPTIONS)}\n  --json               print only the result JSON on stdout\n${ENV_HELP}\n`);
    return 0;
  }
  const json = argv.includes('--json');
  const config = restartConfigFromEnv();
  const opts = parseAvalancheOptions({ values: argvToValues(argv.filter((a) => a !== '--json'), AVALANCHE_OPTIONS), env: process.env, origin: 'CLI' }, config);
  const run = runAvalanche(opts, config);
  run.events.on('phase', (name, detail) => process.stderr.write(`[${opts.target}] ${name}: ${detail}\n`));
  const result = await run.result;
  const file = await writeResults(`avalanche-${result.target}-${opts.restart}-${stamp()}`, result as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  process.stderr.write(await reportLine(file, result, { command: commandLine('bench:avalanche', AVALANCHE_OPTIONS, { ...opts }, result.seed) }));
  reportRestartFailure(result);
  process.stdout.write(json ? JSON.stringify(result, null, 2) + '\n' : formatAvalanche([result]));
  return result.validity.valid ? 0 : 2;
}

runCli(main);
