import { runCli } from '../../lib/cli.ts';
import { argvToValues, helpText } from '../../lib/options.ts';
import { withTarget } from '../core/local-target.ts';
import { stamp, writeResults } from '../core/results.ts';
import { getTarget } from '../targets/index.ts';
import { commandLine, reportLine } from '../report/index.ts';
import { LEAN_TARGETS } from '../targets/lean.ts';
import { IDLE_OPTIONS, idleServiceArgs, parseIdleOptions } from './options.ts';
import { runIdle } from './run.ts';

/** `npm run bench:idle -- --target replay --n 50000`. Progress on stderr; JSON on stdout. */
async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: npm run bench:idle -- --target <${LEAN_TARGETS.join('|')}> [options]\n${helpText(IDLE_OPTIONS)}\n`);
    return 0;
  }
  const opts = parseIdleOptions({ values: argvToValues(argv, IDLE_OPTIONS), env: process.env, origin: 'CLI' });
  const def = getTarget(opts.target);
  const extra = idleServiceArgs(opts);
  const target = extra.length && def.service ? { ...def, service: { ...def.service, args: [...def.service.args, ...extra] } } : def;
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  process.once('SIGTERM', () => abort.abort());
  const result = await withTarget(target, opts.url, (url, svc) =>
    runIdle(opts, url, svc?.pid, {
      signal: abort.signal,
      log: (l) => process.stderr.write(`${l}\n`),
      progress: (p) => process.stderr.write(`[${opts.target}] ${p.phase}: attempted ${p.attempted}, subscribed ${p.subscribed}, failed ${p.failed}, open ${p.open}\n`),
    }),
  );
  const file = await writeResults(`idle-${opts.target}-${stamp()}`, result as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  process.stderr.write(await reportLine(file, result, { command: commandLine('bench:idle', IDLE_OPTIONS, opts) }));
  process.stdout.write(JSON.stringify({ ...result, targetMetrics: { ...result.targetMetrics, series: `${result.targetMetrics.series.length} points (in ${file})` } }, null, 2) + '\n');
  return result.validity.valid ? 0 : 2;
}

runCli(main);
