import { readHistory } from './store.ts';
import { exitCodeOf } from './rebaseline.ts';

/**
 * A stored walk as one figure row: `npx tsx shards/manifest/walk-summary.ts [outputDir] [runId...]`
 * prints JSON lines (one per walk: its tests' verdicts and judged values, the exit code the walk
 * had, and its duration from the run id's start stamp to the last test's record), for
 * `cli/summary.ts` to wrap as a docs/results/ file. Default: every stored walk.
 */
const [dir = 'results', ...ids] = process.argv.slice(2);
const fromStamp = (id: string) => Date.parse(id.replace(/T(\d\d)-(\d\d)-(\d\d)-(\d{3})Z$/, 'T$1:$2:$3.$4Z'));
for (const walk of readHistory(dir).filter((w) => ids.length === 0 || ids.includes(w.runId))) {
  const recs = [...walk.records.values()].sort((a, b) => a.runAt.localeCompare(b.runAt));
  const seconds = Math.round((Date.parse(recs.at(-1)!.runAt) - fromStamp(walk.runId)) / 100) / 10;
  const verdicts: Record<string, number> = {};
  for (const r of recs) verdicts[r.verdict] = (verdicts[r.verdict] ?? 0) + 1;
  const row = {
    bench: 'rebaseline-walk',
    runId: walk.runId,
    commit: recs[0]!.commit,
    tests: recs.length,
    repeat: recs[0]!.repeat,
    seconds,
    verdicts,
    exitCode: exitCodeOf(recs),
    perTest: recs.map((r) => ({ id: r.id, verdict: r.verdict, metrics: Object.fromEntries(r.metrics.map((m) => [m.path, { baseline: m.baseline, measured: m.measured, verdict: m.verdict }])) })),
  };
  process.stdout.write(JSON.stringify(row) + '\n');
}
