import { runCli } from '../lib/cli.ts';
import { ReboundError } from '../lib/errors.ts';
import { argvToValues, helpText, parseOptions } from '../lib/options.ts';
import { randomSeed } from '../lib/rng.ts';
import { withTarget } from '../engine/measure/local-target.ts';
import { stamp, writeResults } from '../engine/measure/result-files.ts';
import { writeSummary } from '../engine/measure/summary.ts';
import { checkJitterOptions, JITTER_OPTIONS, type JitterOptions } from '../runners/jitter/options.ts';
import { formatProgress } from '../runners/jitter/progress.ts';
import { columnLabel, formatComparison } from '../runners/jitter/table.ts';
import type { JitterResult } from '../runners/jitter/result.ts';
import { jitterModule } from '../runners/jitter/module.ts';
import { runJitter } from '../runners/jitter/run.ts';
import { benchAvalancheTable, BENCH_AVALANCHE_HELP } from '../runners/avalanche/compare.ts';
import { abortOnSignals, printedHelp } from './module-cli.ts';
import { commandLine, reportLine } from '../engine/pages/index.ts';
import { getTarget, localTargets, unavailableTargets } from '../engine/targets/index.ts';
import { TARGET_MODULE_OPTIONS } from '../engine/targets/user-module.ts';
import { withTargetModule } from './target-module.ts';

/**
 * The main job: start every local target as a child process, one after another, and run the same
 * seeded jitter test against each, then print one comparison table. The size defaults to
 * something that finishes in a few minutes on a 2-core machine; every jitter option can be raised.
 * With `--target-module ./my-target.ts --url <server>` the column is the user's target against
 * that server (the built-ins too only when `--targets` names them).
 */
// Shared-stream roles belong to runner shards (the coordinator), never to the main job's local targets.
const { target: _t, url: _u, broadcastUrl: _b, subscribeOnly: _so, runId: _ri, ...shared } = JITTER_OPTIONS;
export const BENCH_OPTIONS = {
  ...shared,
  targets: { type: 'string', default: '', env: ['TARGETS'], doc: 'comma-separated targets; default every local target (with --target-module: its target alone)' },
  url: { ...JITTER_OPTIONS.url, doc: 'server of the targets without a local service (a --target-module target); loopback only unless REBOUND_ALLOW_REMOTE_TARGETS=1' },
  clients: { ...JITTER_OPTIONS.clients, default: 500 },
  msgs: { ...JITTER_OPTIONS.msgs, default: 60 },
  jitter: { ...JITTER_OPTIONS.jitter, default: 10 },
  ramp: { ...JITTER_OPTIONS.ramp, default: 250 },
  tuned: { type: 'bool', default: true, env: ['TUNED_COLUMNS'], doc: 'also run each library-driven target (replay, socketio-csr) with --reconnect-strategy tuned, same seed: one column for what a default client sees, one for what the server makes possible on equal client backoff' },
} as const;

async function main(argv: string[]): Promise<number> {
  const usage = () => `usage: npm run bench -- [options] [--json] [--avalanche]\n${helpText({ ...BENCH_OPTIONS, ...TARGET_MODULE_OPTIONS })}\n${BENCH_AVALANCHE_HELP}\n`;
  if (printedHelp(argv, usage)) return 0;
  // A user's target file: loaded and checked first (exit 2 on a bad one); it becomes --targets unless named.
  return withTargetModule(argv, process.env, BENCH_OPTIONS, (rest) => runBench(rest, argv));
}

/** `argv` without --target-module; `given`, the command as typed (the summary's record of it). */
async function runBench(argv: string[], given: readonly string[]): Promise<number> {
  const json = argv.includes('--json');
  // --avalanche: the avalanche table after the jitter one (its size from AVALANCHE_* env, checked before anything runs).
  const avalanche = argv.includes('--avalanche') ? benchAvalancheTable() : undefined;
  const opts = parseOptions(BENCH_OPTIONS, { values: argvToValues(argv.filter((a) => a !== '--json' && a !== '--avalanche'), BENCH_OPTIONS), env: process.env, origin: 'CLI' });
  const targets = opts.targets ? opts.targets.split(',').map((n) => getTarget(n.trim())) : localTargets();
  // The default set leaves out what cannot run here (uws without its binary): say so, run the rest.
  if (!opts.targets) for (const u of unavailableTargets()) process.stderr.write(`${u.name}: not installed here, left out (${u.reason})\n`);
  // A target without a local service (a user's file) runs against --url; every other starts its own.
  for (const t of targets) if (!t.service && opts.url === undefined) throw new ReboundError('RR_ERR_OPTION_INVALID', `target "${t.name}" has no local service: give its server with --url`, { details: { option: 'url' } });
  if (opts.url !== undefined && targets.every((t) => t.service)) throw new ReboundError('RR_ERR_OPTION_INVALID', `--url is the server of a target without a local service (a --target-module target); ${targets.map((t) => t.name).join(', ')} start their own`, { details: { option: 'url' } });
  // One seed for every target: each sees the same drop timeline. 0 means "pick one".
  const seed = opts.seed !== 0 ? opts.seed : randomSeed();
  const { targets: _x, tuned, url, ...rest } = opts;
  // Library-driven targets also run with the shared tuned backoff (engine/targets/reconnect.ts).
  const runs = targets.flatMap((t) => [
    { t, strategy: rest.reconnectStrategy },
    ...(tuned && t.reconnect === 'library' && !t.ownBackoff && rest.reconnectStrategy !== 'tuned' ? [{ t, strategy: 'tuned' as const }] : []),
  ]);
  // SIGTERM/SIGINT stop the run in progress (its partial result is kept, flagged ABORTED) and skip the rest.
  const stop = abortOnSignals((sig) => `\n${sig}: stopping; the partial result is written, flagged ABORTED, and the remaining targets are skipped\n`);
  const results: JitterResult[] = [];
  for (const { t, strategy } of runs) {
    if (stop.aborted) break;
    const own = t.service ? undefined : url;
    // The runner's own validator (URL allowlist, ledger bound), as bench:jitter applies it.
    const jopts: JitterOptions = checkJitterOptions({ ...rest, seed, target: t.name, url: own, broadcastUrl: undefined, reconnectStrategy: strategy, subscribeOnly: false, runId: '' });
    const label = columnLabel({ target: t.name, params: jopts });
    process.stderr.write(`\n== ${label}: ${t.description}\n`);
    const r = await withTarget(t, own, async (at, svc, nodes) => {
      const run = runJitter(jopts, at, { targetPid: svc?.pid, signal: stop, ...(nodes ? { nodes } : {}) });
      run.events.on('phase', (name, detail) => process.stderr.write(`[${label}] ${name}: ${detail}\n`));
      run.events.on('progress', (p) => process.stderr.write(formatProgress(label, p)));
      return run.result;
    });
    results.push(r);
  }
  const name = `bench-${opts.plan.replace(/\+/g, '-')}-${stamp()}`;
  const file = await writeResults(name, results as unknown as Record<string, unknown>[]);
  const summary = await writeSummary(name, results as unknown as Record<string, unknown>[], ['npm run bench --', ...given].join(' '));
  process.stderr.write(`\nresults: ${file}\nsummary: ${summary}\n`);
  process.stderr.write(`${await reportLine(file, results, { command: commandLine('bench', BENCH_OPTIONS, { ...opts, seed }) }, [jitterModule])}\n`);
  process.stdout.write(json ? JSON.stringify(results, null, 2) + '\n' : `Resilience comparison, plan ${opts.plan}${opts.weather ? `, weather ${opts.weather}${opts.weatherScale !== 1 ? ` (time scale ${opts.weatherScale})` : ''}` : ''}: ${opts.clients} clients, ${opts.msgs} msgs every ${opts.interval} ms, disruption every ${opts.jitter} s (+U(0,5)), seed ${seed}\n\n` + formatComparison(results));
  const av = avalanche && !stop.aborted ? await avalanche.run(seed, json) : { ok: !avalanche, text: '' };
  process.stdout.write(av.text);
  return results.every((r) => r.validity.valid) && av.ok ? 0 : 2;
}

runCli(main);
