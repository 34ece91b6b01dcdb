import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../lib/options.ts';
import { processTreeUsage } from '../../engine/measure/target-usage.ts';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { startRunner, tempResultsDir, type RunnerProcess } from '../runner/testing.ts';
import { COORD_OPTIONS } from './options.ts';
import { runMultiShard } from './run.ts';

/**
 * The merged target memory of a replay cluster through two real runner shards and the
 * coordinator, against /proc of the same target's process tree in the same run. The shards are
 * given only the target's URL (TARGET_REPLAY_URL), as the local fleet's are: they must find the
 * tree from its listener and read it the way the fleet's cost table does, not trust the
 * cluster's /metrics, which stops answering under ping load at scale (the 1M pi 3 fleet's froze
 * at ~208K connections and the merged figure read 618 B/conn against /proc's 2,858).
 */
const TOKEN = 'idle-memory-token';
let target: ServiceHandle;
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  // Small young generations, as the local fleet runs the target: the growth is the connections'.
  target = await startService('replay', { args: ['--workers', '3'], env: { NODE_OPTIONS: '--max-semi-space-size=1' }, startTimeoutMs: 90_000 });
  for (let i = 0; i < 2; i++) runners.push(await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_REPLAY_URL: target.httpUrl }));
}, 180_000);
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await target?.stop();
});

describe.skipIf(process.platform !== 'linux')('idle target memory over a replay cluster, two shards', () => {
  it('the merged bytes per connection agree with /proc of the target tree within 5%, found from the target\'s listener', async () => {
    const perShardN = 2500;
    const values = { shards: runners.map((r) => r.url).join(','), token: TOKEN, test: 'idle', target: 'replay', perShardN, pollMs: 200, timeoutSec: 90 };
    const co = parseOptions(COORD_OPTIONS, { values });
    // A short run first: each worker's one-off costs (code compiled for the connection path, the
    // transport's first buffers) are paid before either baseline, which the shards take a moment
    // after this test's own. At 5,000 connections those few MB would be ~1 KB per connection of
    // disagreement about when the baseline was read, not about the connections.
    const warm = await runMultiShard(parseOptions(COORD_OPTIONS, { values: { ...values, perShardN: 200 } }), { hold: '1', ramp: '500', workers: '1' }, () => {});
    expect(warm.perShard.map((s) => s.status)).toEqual(['done', 'done']);
    const base = processTreeUsage(target.pid)!.rssBytes;
    // An 8 s hold: the shards sample the target once a second, and the tree's RSS still settles
    // for a few seconds after the last connect; both figures must see the plateau.
    let peak = 0;
    const seen = new Map<string, { phase?: string; subscribed?: number }>();
    const r = await runMultiShard(co, { hold: '8', ramp: '500', workers: '1' }, () => {}, {
      onProgress: (shard, _status, p) => {
        seen.set(shard, (p ?? {}) as { phase?: string; subscribed?: number });
        // /proc of the tree while every shard holds all its connections: the reference.
        if (seen.size === 2 && [...seen.values()].every((x) => x.phase === 'hold')) peak = Math.max(peak, processTreeUsage(target.pid)!.rssBytes);
      },
    });
    expect(r.perShard.map((s) => s.status), JSON.stringify(r.perShard)).toEqual(['done', 'done']);
    expect(r.merged.subscribed).toBe(2 * perShardN);
    expect(peak).toBeGreaterThan(base);
    const procBytes = (peak - base) / (2 * perShardN);
    const merged = r.merged.targetBytesPerConnection as number;
    expect(Math.abs(merged - procBytes) / procBytes, `merged ${merged} B/conn (${JSON.stringify(r.merged.targetMemory)}) vs /proc ${Math.round(procBytes)} B/conn`).toBeLessThan(0.05);
    expect(r.merged.targetMemory).toMatchObject({ source: 'proc-tree', complete: true });
    expect(r.validity.flags.map((f) => f.code)).not.toContain('FLEET_TARGET_MEMORY_INCOMPLETE');
  }, 120_000);
});
