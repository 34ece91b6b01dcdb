import { argvToValues, helpText, parseOptions, type OptionTable } from '../../lib/options.ts';
import { writeResults } from '../../runners/core/results.ts';
import { commandLine, reportLine } from '../../runners/report/index.ts';
import { COORD_OPTIONS, TEST_TABLES } from './options.ts';
import { formatReport } from './report.ts';
import { runMultiShard, testQuery } from './run.ts';

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
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
  const o = parseOptions(COORD_OPTIONS, { values: coordValues, env, origin: 'CLI' });
  const query = testQuery(o.test, params);
  const report = await runMultiShard(o, query, (line) => process.stderr.write(line + '\n'));
  const file = await writeResults(`${o.test}-multi-${o.target}-${report.shards}shards-${report.startedAt.replace(/[:.]/g, '-')}`, report as unknown as Record<string, unknown>);
  process.stderr.write(`results: ${file}\n`);
  // The merged JSON names its test `testType`; the report registry keys on `test`.
  process.stderr.write(await reportLine(file, { ...report, test: 'multi-shard' }, { command: commandLine('bench:multi', { ...testTable, ...COORD_OPTIONS }, { ...values, ...o }) }));
  process.stdout.write(o.json ? JSON.stringify(report, null, 2) + '\n' : formatReport(report));
  return report.exitCode;
}

