import { argvToValues, helpText, kebab, parseOptions, type OptionTable } from '../../lib/options.ts';
import { writeResults } from '../../engine/measure/result-files.ts';
import { commandLine, reportLine } from '../../engine/pages/index.ts';
import { COORD_OPTIONS, TEST_TABLES } from './options.ts';
import { COORDINATOR_PAGES } from './page.ts';
import { formatReport } from './summary.ts';
import { runMultiShard, testQuery } from './run.ts';

const COORD_NAMES = new Set(Object.keys(COORD_OPTIONS).flatMap((k) => [k, kebab(k)]));

/**
 * `SHARDS=url1,url2 BENCH_RUNNER_TOKEN=... npm run bench:multi -- --test jitter --target replay [test params]`
 * (and `npm run bench:<test>:multi`). Per-shard progress on stderr; a summary or `--json` on stdout;
 * the merged JSON also goes to results/. Exit 2 fatal flag or bad input, 1 failed shard or loss, 0 ok.
 */
export async function main(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  const testArg = argv.findIndex((a) => a === '--test');
  const test = testArg >= 0 ? argv[testArg + 1] : argv.find((a) => a.startsWith('--test='))?.slice(7);
  const testTable = (TEST_TABLES[test as keyof typeof TEST_TABLES] ?? {}) as OptionTable;
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`usage: SHARDS=url1,url2 npm run bench:multi -- --test <test> --target <name> [test params] [--json]\ncoordinator options:\n${helpText(COORD_OPTIONS)}\n${Object.keys(testTable).length ? `${test} params (forwarded to every shard):\n${helpText(testTable)}\n` : 'test params are forwarded to the shards, which validate them\n'}`);
    return 0;
  }
  const values = argvToValues(argv, { ...testTable, ...COORD_OPTIONS });
  const coordValues = Object.fromEntries(Object.entries(values).filter(([k]) => COORD_NAMES.has(k)));
  const params = Object.fromEntries(Object.entries(values).filter(([k]) => !COORD_NAMES.has(k)));
  Object.assign(params, benchEnvParams(testTable, params, env));
  const o = parseOptions(COORD_OPTIONS, { values: coordValues, env, origin: 'CLI' });
  const query = testQuery(o.test, params);
  const report = await runMultiShard(o, query, (line) => process.stderr.write(line + '\n'));
  const file = await writeResults(`${o.test}-multi-${o.target}-${report.shards}shards-${report.startedAt.replace(/[:.]/g, '-')}`, report as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  // The merged JSON names its test `testType`; the report registry keys on `test`.
  process.stderr.write(await reportLine(file, { ...report, test: 'multi-shard' }, { command: reproduceLine(testTable, { ...values, ...params }, o) }, COORDINATOR_PAGES));
  process.stdout.write(o.json ? JSON.stringify(report, null, 2) + '\n' : formatReport(report));
  return report.exitCode;
}


/** The drivers' names for options whose tables carry none (reference section 3, "Drivers"). */
const DRIVER_ENV: Record<string, string[]> = { samplesCap: ['SAMPLES_CAP'], duration: ['DURATION'], hold: ['HOLD_SEC'], ramp: ['RAMP_PER_SEC'], stream: ['STREAM'] };

/** Env names the coordinator itself owns (clients per shard, shard list...): never read as a test param. */
const COORD_ENV = new Set(Object.values(COORD_OPTIONS).flatMap((spec) => ((spec as { env?: readonly string[] }).env ?? []) as string[]));

/**
 * The benchmark's multi-shard drivers take their test params from the environment (idle-multi:
 * HOLD_SEC, RAMP_PER_SEC, STREAM; jitter-multi: TOTAL_MESSAGES, INTERVAL_MS, SAMPLES_CAP, ...):
 * each test option's own env names (its table's `env`) fill what the command line left unset.
 * Clients come from PER_SHARD_N/TOTAL only, so a client-count env name is not read here.
 */
export function benchEnvParams(table: OptionTable, given: Record<string, unknown>, env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, spec] of Object.entries(table)) {
    // subscribeOnly is the coordinator's to set per shard (shared-stream mode).
    if (given[k] !== undefined || k === 'clients' || k === 'n' || k === 'target' || k === 'subscribeOnly') continue;
    const name = [...(spec.env ?? []), ...(DRIVER_ENV[k] ?? [])].find((e) => !COORD_ENV.has(e) && env[e] !== undefined && env[e] !== '');
    if (name) out[k] = env[name]!;
  }
  return out;
}

/** The Reproduce line: the token by its variable, never a placeholder a user would paste. */
export function reproduceLine(testTable: OptionTable, values: Record<string, unknown>, o: Record<string, unknown>): string {
  const { token: _t, ...rest } = o;
  return `BENCH_RUNNER_TOKEN="$BENCH_RUNNER_TOKEN" ${commandLine('bench:multi', { ...testTable, ...COORD_OPTIONS }, { ...values, ...rest, token: '' })}`;
}
