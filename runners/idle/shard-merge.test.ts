import { describe, expect, it } from 'vitest';
import { mergeShards } from '../../shards/merge/merge.ts';
import { done } from '../../shards/merge/fixtures.ts';
import type { ShardResult } from '../../shards/merge/types.ts';
import { formatReport } from '../../shards/coordinator/summary.ts';
import type { MultiShardReport } from '../../shards/coordinator/run.ts';
import { targetMemoryOf } from './run.ts';
import { checkIdleValidity } from './validity.ts';

/** An idle shard result as a runner stores it, with the target memory it sampled. */
const idle = (targetMetrics: Record<string, unknown>, flags: { code: string; severity: 'warning'; message: string }[] = []): ShardResult =>
  ({ test: 'idle', target: 'replay', clients: 1000, connected: 1000, subscribed: 1000, failed: 0, failureCauses: {}, runner: { rssBaselineBytes: 1e8, rssPeakBytes: 1.04e8, rssPerClientBytes: 4000 }, targetMetrics, validity: { valid: true, flags } }) as unknown as ShardResult;

describe('idle target memory: a figure that missed part of the target is flagged, never silently low', () => {
  it('the runner: whole samples only, up to the hold end; none while the connections were held is TARGET_MEMORY_INCOMPLETE', () => {
    const s = (sec: number, rssBytes: number | null, whole = rssBytes !== null) => ({ at: sec * 1000, rssBytes, cpuPct: null, connections: null, whole });
    // Ramp 0..10 s, hold to 20 s. The cluster view answered until 4 s, then nothing or one worker's figure.
    const silent = [s(0, 100), s(2, 120), s(4, 140), s(6, null), s(8, 30, false), s(12, null), s(16, 35, false), s(19, null)];
    const m = targetMemoryOf(silent, 100, 10_000, 20_000, 'metrics');
    expect(m.peakRss).toBe(140);
    expect(m.incomplete).toMatch(/no metrics sample saw every process of the target while the connections were held: 3 of 8 samples did \(3 unanswered, 2 covering only some processes\)/);
    expect(checkIdleValidity({ clients: 1000, subscribed: 1000, failed: 0, failureCauses: {}, disconnectedDuringHold: {}, runnerLoopLagP99Ms: 0, targetSamples: 8, targetMemoryIncomplete: m.incomplete }).flags.map((f) => f.code)).toEqual(['TARGET_MEMORY_INCOMPLETE']);
    // A whole sample during the hold: complete; closing's growth after the hold is not the peak.
    const ok = targetMemoryOf([...silent, s(15, 190), s(22, 400)], 100, 10_000, 20_000, 'metrics');
    expect(ok).toMatchObject({ peakRss: 190, incomplete: null });
  });

  it('the merge: one incomplete shard (or one that does not say) makes merged.targetMemory incomplete, FLEET_TARGET_MEMORY_INCOMPLETE, and the summary marks the cell', async () => {
    const whole = { source: 'proc-tree', baselineRssBytes: 1e9, peakRssBytes: 1.006e9, complete: true };
    const partial = { source: 'metrics', baselineRssBytes: 1e9, peakRssBytes: 1.001e9, complete: false, incompleteReason: 'x' };
    const a = await mergeShards([done('s1', idle(whole)), done('s2', idle(partial, [{ code: 'TARGET_MEMORY_INCOMPLETE', severity: 'warning', message: 'x' }]))]);
    expect(a.merged.targetBytesPerConnection).toBe(3000);
    expect(a.merged.targetMemory).toMatchObject({ complete: false, incompleteShards: ['s2'] });
    const flag = a.validity.flags.find((f) => f.code === 'FLEET_TARGET_MEMORY_INCOMPLETE')!;
    expect(flag).toMatchObject({ severity: 'warning', shards: ['s2'] });
    expect(flag.message).toMatch(/s2 saw only part of the target's processes.*may be understated/);
    // A runner from before the check: unknown is not complete.
    const b = await mergeShards([done('s1', idle(whole)), done('s2', idle({ source: 'metrics', baselineRssBytes: 1e9, peakRssBytes: 1.001e9 }))]);
    expect(b.merged.targetMemory).toMatchObject({ complete: false, incompleteShards: ['s2'] });
    const c = await mergeShards([done('s1', idle(whole)), done('s2', idle(whole))]);
    expect(c.merged.targetMemory).toMatchObject({ complete: true, incompleteReason: null });
    expect(c.validity.flags.map((f) => f.code)).not.toContain('FLEET_TARGET_MEMORY_INCOMPLETE');
    const report = (m: typeof a) => formatReport({ testType: 'idle', target: 'replay', shards: 2, perShardN: 1000, mode: 'own-stream', perShard: m.perShard, merged: m.merged, validity: m.validity, exitCode: 0, exitReason: 'ok' } as unknown as MultiShardReport);
    expect(report(a)).toMatch(/merged .*3000 \(incomplete\).*FLEET_TARGET_MEMORY_INCOMPLETE/);
    expect(report(a)).toContain('WARNING FLEET_TARGET_MEMORY_INCOMPLETE');
    expect(report(c)).not.toContain('incomplete');
  });
});
