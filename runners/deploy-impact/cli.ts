import { runCli } from '../../lib/cli.ts';
import { commandLine, reportLine } from '../report/index.ts';
import { argvToValues, helpText } from '../../lib/options.ts';
import { stamp, writeResults } from '../core/results.ts';
import { TARGET_NAMES } from '../targets/index.ts';
import { formatDeployImpact } from '../avalanche/report.ts';
import { DEPLOY_IMPACT_OPTIONS, parseDeployImpactOptions } from './options.ts';
import { runDeployImpact } from './run.ts';

/** `npm run bench:deploy-impact -- --target <name> --clients N [--json]`. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:deploy-impact -- --target <${TARGET_NAMES.join('|')}> [options] [--json]\n${helpText(DEPLOY_IMPACT_OPTIONS)}\n  --json               print only the result JSON on stdout\n`);
    return 0;
  }
  const json = argv.includes('--json');
  const opts = parseDeployImpactOptions({ values: argvToValues(argv.filter((a) => a !== '--json'), DEPLOY_IMPACT_OPTIONS), env: process.env, origin: 'CLI' });
  const run = runDeployImpact(opts);
  run.events.on('phase', (name, detail) => process.stderr.write(`[${opts.target}] ${name}: ${detail}\n`));
  const result = await run.result;
  const file = await writeResults(`deploy-impact-${result.target}-${stamp()}`, result as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  process.stderr.write(await reportLine(file, result, { command: commandLine('bench:deploy-impact', DEPLOY_IMPACT_OPTIONS, { ...opts }, result.seed) }));
  if (!result.publisher.ok) process.stderr.write(`error RR_ERR_RESTART_FAILED: the publisher's restart failed: ${result.publisher.error}\n`);
  process.stdout.write(json ? JSON.stringify(result, null, 2) + '\n' : formatDeployImpact([result]));
  return result.validity.valid ? 0 : 2;
}

runCli(main);
