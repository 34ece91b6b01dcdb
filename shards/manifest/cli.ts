import { resolve } from 'node:path';
import { argvToValues, helpText, parseOptions } from '../../lib/options.ts';
import { commandLine } from '../../engine/pages/index.ts';
import { formatHistory } from './history.ts';
import { writeHistoryReport } from './history-page.ts';
import { REBASELINE_OPTIONS } from './options.ts';
import { formatRecords, useColor } from './table.ts';
import { describePlan, rebaseline } from './rebaseline.ts';
import { readHistory } from './store.ts';

type Io = { out: (s: string) => void; err: (s: string) => void; env: Record<string, string | undefined>; tty?: boolean };
const stdio: Io = { out: (s) => void process.stdout.write(s), err: (s) => void process.stderr.write(s), env: process.env };

/** `npm run bench:rebaseline [-- --repeat K --update]`: exit 2 on an invalid or failed test, 1 on a regress, else 0. */
export async function rebaselineMain(argv: string[], io: Io = stdio): Promise<number> {
  if (argv.includes('--help')) return io.out(`usage: npm run bench:rebaseline [-- options]\n${helpText(REBASELINE_OPTIONS)}\n`), 0;
  const o = parseOptions(REBASELINE_OPTIONS, { values: argvToValues(argv, REBASELINE_OPTIONS), env: io.env, origin: 'CLI' });
  const run = await rebaseline(o, io.env, (l) => io.err(l + '\n'));
  if (o.dryRun) return io.out(describePlan(run.tests, run.where, run.skipped)), 0;
  io.out(formatRecords(run.records, useColor(io.env, io.tty ?? process.stdout.isTTY)));
  if (o.update) io.out(`baselines written to ${resolve(o.manifest)} (run ${run.runId})\n`);
  return run.exitCode;
}

/** `npm run bench:rebaseline:history` (LAST, FILTER): exit 1 when there is no stored run. */
export async function historyMain(argv: string[], io: Io = stdio): Promise<number> {
  if (argv.includes('--help')) return io.out(`usage: npm run bench:rebaseline:history [-- --last N --filter x --html]\n${helpText(REBASELINE_OPTIONS)}\n`), 0;
  const o = parseOptions(REBASELINE_OPTIONS, { values: argvToValues(argv, REBASELINE_OPTIONS), env: io.env, origin: 'CLI' });
  const history = readHistory(resolve(o.outputDir));
  const text = formatHistory(history, o);
  if (!text) return io.err(`no stored rebaseline runs under ${resolve(o.outputDir, 'runs')}${o.filter ? ` matching FILTER=${o.filter}` : ''}\n`), 1;
  io.out(text);
  if (o.html) io.err(`report: ${await writeHistoryReport(resolve(o.outputDir), history, o, { command: commandLine('bench:rebaseline:history', REBASELINE_OPTIONS, o) })}\n`);
  return 0;
}
