/**
 * Merge speed: N shard results (each with its own encoded HdrHistogram of `samples` long-tailed
 * latencies) merged exactly by shards/merge, timed over `reps` repetitions; also checks that the
 * merged percentiles equal one histogram of the union. Prints one JSON line (and writes it with --out).
 *
 *   npx tsx bench/merge-shards.ts [--shards 50] [--samples 20000] [--reps 5] [--out docs/results/coord-merge-50.json]
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseCliOptions } from '../lib/cli.ts';
import { LatencyRecorder, summarize } from '../engine/measure/latency.ts';
import { mergeShards } from '../shards/merge/merge.ts';
import { done, shardResult, tailLatencies } from '../shards/merge/fixtures.ts';

const o = parseCliOptions({
  shards: { type: 'int', default: 50, min: 1, max: 1000, doc: 'shard results to merge' },
  samples: { type: 'int', default: 20_000, min: 1, max: 1_000_000, doc: 'latencies recorded per shard' },
  reps: { type: 'int', default: 5, min: 1, max: 100, doc: 'timed merges' },
  out: { type: 'string', default: '', doc: 'also write the JSON summary to this file' },
});

const union = new LatencyRecorder();
const outcomes = Array.from({ length: o.shards }, (_, i) => {
  const l = tailLatencies(1000 + i, o.samples, 5 + (i % 10));
  for (const v of l) union.recordMs(v);
  return done(`s${i + 1}`, shardResult({ clients: 20_000, msgs: 120, latenciesMs: l }));
});
// Results travel as JSON: time the merge from the parsed wire form, as the coordinator sees it.
const wire = JSON.parse(JSON.stringify(outcomes)) as typeof outcomes;
const times: number[] = [];
let merged: Record<string, unknown> = {};
for (let r = 0; r < o.reps; r++) {
  const t0 = performance.now();
  merged = (await mergeShards(wire, { perShardN: 20_000 })).merged;
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const exact = JSON.stringify(merged.latencyRawMs) === JSON.stringify(summarize(union.encode()).latencyRawMs);
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
})();
const summary = {
  bench: 'merge-shards',
  date: new Date().toISOString(),
  commit,
  shards: o.shards,
  samplesPerShard: o.samples,
  reps: o.reps,
  mergeMs: { min: +times[0]!.toFixed(1), median: +times[Math.floor(times.length / 2)]!.toFixed(1), max: +times.at(-1)!.toFixed(1) },
  mergedEqualsUnion: exact,
  mergedLatencyRawMs: merged.latencyRawMs,
  loadavg1m: +loadavg()[0]!.toFixed(2),
};
const line = JSON.stringify(summary);
process.stdout.write(line + '\n');
if (o.out) writeFileSync(o.out, JSON.stringify(summary, null, 2) + '\n');
process.exit(exact ? 0 : 1);
