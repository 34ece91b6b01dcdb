import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../lib/options.ts';
import { until } from '../../lib/time.ts';
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
 * at ~208K connections and the merged figure read 618 B/conn against /proc's 2,858). The
 * quotient's agreement is a scale figure: measured at 1M in docs/performance.md ("One baseline instant").
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

/** Reads the tree every 250 ms until four readings in a row lie within 1 MB (at most 20 s): the warm run's garbage is collected before either baseline. */
const settle = (read: () => void, rss: { bytes: number }[]) =>
  until(() => {
    read();
    const last = rss.slice(-4).map((x) => x.bytes);
    return last.length === 4 && Math.max(...last) - Math.min(...last) < 1048576;
  }, 20_000, undefined, 250);

describe.skipIf(process.platform !== 'linux')('idle target memory over a replay cluster, two shards', () => {
  it('the merged baseline and peak are readings of the whole target tree, found from the target\'s listener', async () => {
    const perShardN = 2500;
    const values = { shards: runners.map((r) => r.url).join(','), token: TOKEN, test: 'idle', target: 'replay', perShardN, pollMs: 200, timeoutSec: 90 };
    const co = parseOptions(COORD_OPTIONS, { values });
    // A short run first: each worker's one-off costs (code compiled for the connection path, the
    // transport's first buffers) are paid before either baseline, which the shards take a moment
    // after this test's own. At 5,000 connections those few MB would be ~1 KB per connection of
    // disagreement about when the baseline was read, not about the connections.
    const warm = await runMultiShard(parseOptions(COORD_OPTIONS, { values: { ...values, perShardN: 200 } }), { hold: '1', ramp: '500', workers: '1' }, () => {});
    expect(warm.perShard.map((s) => s.status)).toEqual(['done', 'done']);
    // The reference: /proc of the same tree ten times a second through the job. The merged
    // baseline and peak are single readings the shards took once a second; each must be a reading
    // of the whole tree at some instant of its window (within 1 MB of what /proc read around it).
    // Comparing the quotients instead failed on noise: at 5,000 connections the growth is ~30 MB
    // and one major GC moves the tree by 3-6 MB, 10-25% of it, whoever reads it.
    const rss: { at: number; bytes: number }[] = [];
    const read = () => rss.push({ at: Date.now(), bytes: processTreeUsage(target.pid)!.rssBytes });
    await settle(read, rss);
    const jobStart = Date.now();
    const sampler = setInterval(read, 100);
    let rampAt = Infinity;
    let firstHold = Infinity;
    let lastHold = 0;
    const seen = new Map<string, { phase?: string; subscribed?: number }>();
    const r = await runMultiShard(co, { hold: '8', ramp: '500', workers: '1' }, () => {}, {
      onProgress: (shard, _status, p) => {
        seen.set(shard, (p ?? {}) as { phase?: string; subscribed?: number });
        if ([...seen.values()].some((x) => (x.subscribed ?? 0) > 0)) rampAt = Math.min(rampAt, Date.now());
        if (seen.size === 2 && [...seen.values()].every((x) => x.phase === 'hold')) [firstHold, lastHold] = [Math.min(firstHold, Date.now()), Date.now()];
      },
    }).finally(() => clearInterval(sampler));
    read();
    const within = (from: number, to: number) => rss.filter((x) => x.at >= from && x.at <= to).map((x) => x.bytes);
    const MB = 1048576;
    expect(r.perShard.map((s) => s.status), JSON.stringify(r.perShard)).toEqual(['done', 'done']);
    expect(r.merged.subscribed).toBe(2 * perShardN);
    expect(lastHold, 'both shards were seen holding').toBeGreaterThan(firstHold);
    const tm = r.merged.targetMemory as { baselineRssBytes: number; peakRssBytes: number };
    const before = within(jobStart, rampAt);
    const holding = within(firstHold, lastHold);
    const all = within(jobStart, Infinity);
    const range = (v: number[]) => `${(Math.min(...v) / MB).toFixed(1)}-${(Math.max(...v) / MB).toFixed(1)} MB`;
    const what = `merged baseline ${(tm.baselineRssBytes / MB).toFixed(1)} MB (/proc before the ramp ${range(before)}), peak ${(tm.peakRssBytes / MB).toFixed(1)} MB (/proc while holding ${range(holding)}, whole job ${range(all)})`;
    expect(tm.baselineRssBytes, what).toBeGreaterThanOrEqual(Math.min(...before) - MB);
    expect(tm.baselineRssBytes, what).toBeLessThanOrEqual(Math.max(...before) + MB);
    // Never below what the tree held while every connection was open (a part of the tree, or a
    // /metrics that stopped answering, reads low), never above the tree's highest reading.
    expect(tm.peakRssBytes, what).toBeGreaterThanOrEqual(Math.min(...holding) - MB);
    expect(tm.peakRssBytes, what).toBeLessThanOrEqual(Math.max(...all) + MB);
    expect(r.merged.targetBytesPerConnection).toBe(Math.round((tm.peakRssBytes - tm.baselineRssBytes) / (2 * perShardN)));
    expect(r.merged.targetMemory).toMatchObject({ source: 'proc-tree', complete: true });
    expect(r.validity.flags.map((f) => f.code)).not.toContain('FLEET_TARGET_MEMORY_INCOMPLETE');
  }, 120_000);
});
