/**
 * The same seeded chaos plans through Rebound's proxy and through a real Toxiproxy, in one run:
 *
 *   npm run bench:proxy-compare -- --toxiproxy-url http://127.0.0.1:28474 [--plans partition,reset]
 *     [--rounds 2] [--seed 77] [--clients 48] [--out docs/results/x.json]
 *
 * For each plan and round it runs `npm run bench -- --plan <plan> …` (every local target) twice,
 * first on the embedded proxy, then with TOXIPROXY_URL set (A/B, then A/B again), so the
 * proxy-to-proxy difference stands next to one proxy's run-to-run difference. The clients'
 * reconnect jitter is seeded by the plan's seed (engine/targets/seeded-jitter.ts), so each
 * pair sees the same drop schedule and the same reconnect schedule; what is left is the proxy
 * and the machine. Goal per (plan, target, round): delivery within 0.5 points, recover p50
 * within 10 % of the real Toxiproxy's.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseCliOptions } from '../lib/cli.ts';
import { ReboundError } from '../lib/errors.ts';
import type { OptionTable } from '../lib/options.ts';
import { parsePlan } from '../chaos/plans/catalog.ts';
import { isAllowedTargetUrl } from '../engine/measure/addresses.ts';
import { currentCommit } from '../engine/measure/summary.ts';
import type { JitterResult } from '../runners/jitter/result.ts';
import { comparePairs, compareRounds, GOAL, rowOf, type CompareRow } from '../runners/jitter/plan-compare.ts';

const OPTIONS = {
  toxiproxyUrl: { type: 'string', default: '', doc: 'the real Toxiproxy API (loopback), e.g. http://127.0.0.1:28474' },
  plans: { type: 'string', default: 'partition,reset,flaky,slow-consumer,blackhole,cutoff', doc: 'comma-separated plans, each run with its PLAN_ARGS' },
  rounds: { type: 'int', min: 1, max: 5, default: 2, doc: 'A/B rounds per plan (A = Rebound, B = Toxiproxy)' },
  seed: { type: 'int', min: 1, default: 77, doc: 'one seed for every run' },
  clients: { type: 'int', min: 4, max: 2000, default: 48, doc: 'clients per target run' },
  out: { type: 'optional-string', default: undefined, doc: 'write the figure file (commit, command, measuredAt, results, comparison) here' },
} satisfies OptionTable;

/** Shared by every plan: 4 proxy groups, disruptions 3 s + U(0, 5) s apart, tuned library backoff (seeded). */
const BASE = ['--msgs', '60', '--interval', '200', '--jitter', '3', '--groups', '4', '--settle', '30000', '--reconnect-strategy', 'tuned'];

/** `base` flag/value pairs with `over`'s values in their place (the bench refuses a flag given twice). */
export function benchArgs(base: readonly string[], over: readonly string[]): string[] {
  const m = new Map<string, string>();
  for (const list of [base, over]) for (let i = 0; i + 1 < list.length; i += 2) m.set(list[i]!, list[i + 1]!);
  return [...m].flat();
}

/**
 * Per plan: durations short enough for a few-minute run, long enough to bite. slow-consumer needs
 * more than 1 KB/s per client to matter (1000-byte payloads every 100 ms); blackhole is cut to
 * 15 s (Socket.IO then notices at the lift, not by ping timeout) and needs a longer window.
 */
export const PLAN_ARGS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  partition: ['--chaos-ms', '2000'],
  reset: [],
  flaky: ['--chaos-ms', '4000'],
  'slow-consumer': ['--chaos-ms', '4000', '--msgs', '120', '--interval', '100', '--payload-bytes', '1000'],
  blackhole: ['--chaos-ms', '15000', '--msgs', '130'],
  cutoff: ['--chaos-ms', '3000'],
});

/** `npm run bench` once; its --json stdout is the result array. */
function bench(args: readonly string[], toxiproxyUrl: string | undefined): Promise<JitterResult[]> {
  const env = { ...process.env };
  delete env.TOXIPROXY_URL;
  if (toxiproxyUrl) env.TOXIPROXY_URL = toxiproxyUrl;
  const script = fileURLToPath(new URL('../cli/bench.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, '--json', ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      // Exit 2 = an invalid run; its results still parse and say why.
      try {
        resolve(JSON.parse(out) as JitterResult[]);
      } catch {
        reject(new ReboundError('RR_ERR_RUN_FAILED', `npm run bench exited ${code} without a JSON result (${args.join(' ')})`));
      }
    });
  });
}

async function main(): Promise<void> {
  const opts = parseCliOptions(OPTIONS);
  const url = opts.toxiproxyUrl.replace(/\/$/, '');
  if (url === '' || !isAllowedTargetUrl(url)) {
    process.stderr.write(`error RR_ERR_OPTION_INVALID: --toxiproxy-url must be a loopback http URL of a running Toxiproxy; got ${JSON.stringify(opts.toxiproxyUrl)}\n`);
    process.exit(2);
  }
  const plans = opts.plans.split(',').map((p) => p.trim()).filter(Boolean);
  for (const p of plans) {
    parsePlan(p);
    if (!PLAN_ARGS[p]) {
      process.stderr.write(`error RR_ERR_OPTION_INVALID: no PLAN_ARGS for plan "${p}" (known: ${Object.keys(PLAN_ARGS).join(', ')})\n`);
      process.exit(2);
    }
  }
  const version = await fetch(`${url}/version`).then((r) => r.json() as Promise<{ version?: string }>);
  const commit = currentCommit();
  const rows: CompareRow[] = [];
  const commands: string[] = [];
  for (const plan of plans) {
    const args = benchArgs([...BASE, '--clients', String(opts.clients), '--seed', String(opts.seed)], [...PLAN_ARGS[plan]!, '--plan', plan]);
    commands.push(`npm run bench -- ${args.join(' ')}`);
    for (let round = 1; round <= opts.rounds; round++) {
      for (const proxy of ['rebound', 'toxiproxy'] as const) {
        process.stderr.write(`\n=== ${plan} round ${round}: ${proxy} ${new Date().toISOString()}\n`);
        for (const r of await bench(args, proxy === 'toxiproxy' ? url : undefined)) rows.push(rowOf(plan, proxy, round, r));
      }
    }
  }
  const pairs = comparePairs(rows);
  const doc = {
    commit,
    command: ['npm run bench:proxy-compare --', ...process.argv.slice(2)].join(' '),
    measuredAt: new Date().toISOString(),
    node: process.version,
    toxiproxy: { url, version: version.version },
    benchCommands: commands,
    note: 'each plan: one `npm run bench` per proxy per round, Rebound first (TOXIPROXY_URL unset), then the real Toxiproxy (TOXIPROXY_URL set); same seed, seeded client reconnect jitter',
    results: rows,
    comparison: pairs,
    runToRun: compareRounds(rows),
    goal: { ...GOAL, metEveryPair: pairs.every((p) => p.goalMet), missed: pairs.filter((p) => !p.goalMet) },
  };
  if (opts.out) await writeFile(opts.out, `${JSON.stringify(doc, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    // A coded error (unknown plan, a run without a result) is the message; anything else a bug.
    if (err instanceof ReboundError) process.stderr.write(`error ${err.code}: ${err.message}\n`);
    else process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(err instanceof ReboundError ? 2 : 1);
  });
}
