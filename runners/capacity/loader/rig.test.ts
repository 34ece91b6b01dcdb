import { describe, expect, it } from 'vitest';
import type { MergedReady } from './merge.ts';
import { DEFAULT_RIG_LIMITS, judgeStep, rigFlags, subscribeFlag, type RigObservation } from './rig.ts';

const ready: MergedReady = { requested: 100, subscribed: 100, failed: 0, failureCauses: {}, rigLimitFailures: 0, connectMs: 10 };
const calm: RigObservation = { ready, step: { loaders: [{ loader: 0, loopLagP99Ms: 2, loopLagMaxMs: 5, cpuPct: 30, peakRssMb: 60 }] }, publisher: { offered: 1000, sent: 1000, tickLateMaxMs: 3 } };
const budget = { minDeliveredPct: 99, maxP99Ms: 100 };
const codes = (o: RigObservation) => rigFlags(o, DEFAULT_RIG_LIMITS).map((f) => f.code);

describe('rig validity rules', () => {
  it('a calm rig raises nothing', () => {
    expect(codes(calm)).toEqual([]);
  });

  it('each rule fires on its own condition', () => {
    expect(codes({ ...calm, step: { loaders: [{ ...calm.step.loaders[0]!, loopLagP99Ms: 40 }] } })).toEqual(['RIG_LOADER_LOOP_LAG']);
    expect(codes({ ...calm, step: { loaders: [{ ...calm.step.loaders[0]!, cpuPct: 97 }] } })).toEqual(['RIG_LOADER_CPU']);
    expect(codes({ ...calm, publisher: { offered: 1000, sent: 900, tickLateMaxMs: 3 } })).toEqual(['RIG_PUBLISHER_BEHIND']);
    expect(codes({ ...calm, publisher: { offered: 1000, sent: 1000, tickLateMaxMs: 400 } })).toEqual(['RIG_PUBLISHER_BEHIND']);
    expect(codes({ ...calm, ready: { ...ready, subscribed: 90, failed: 10, rigLimitFailures: 10, failureCauses: { fd_limit: 10 } } })).toEqual(['RIG_CONNECT_LIMIT']);
    expect(codes({ ...calm, machine: { idlePct: 2, cores: 2, targetCpuPct: 60, targetProcesses: 1 } })).toEqual(['RIG_MACHINE_CPU']);
  });

  it('a busy machine is not the rig\'s fault when the target saturated its own core(s), nor when cores were left', () => {
    expect(codes({ ...calm, machine: { idlePct: 2, cores: 2, targetCpuPct: 95, targetProcesses: 1 } })).toEqual([]);
    expect(codes({ ...calm, machine: { idlePct: 2, cores: 2, targetCpuPct: 150, targetProcesses: 2 } })).toEqual(['RIG_MACHINE_CPU']);
    expect(codes({ ...calm, machine: { idlePct: 30, cores: 2, targetCpuPct: 60, targetProcesses: 1 } })).toEqual([]);
    expect(codes({ ...calm, machine: null })).toEqual([]);
  });

  it('blames the rig for a failing step only when a rig rule fired, and then fatally', () => {
    const lag = rigFlags({ ...calm, step: { loaders: [{ ...calm.step.loaders[0]!, loopLagP99Ms: 40 }] } }, DEFAULT_RIG_LIMITS);
    const byRig = judgeStep({ deliveredPct: 100, p99Ms: 180, publishFailed: 0 }, budget, lag);
    expect(byRig).toMatchObject({ pass: false, limitedBy: 'rig' });
    expect(byRig.reason).toMatch(/the rig was the limit \(RIG_LOADER_LOOP_LAG\)/);
    expect(byRig.flags.every((f) => f.severity === 'fatal')).toBe(true);
    const byTarget = judgeStep({ deliveredPct: 95, p99Ms: 20, publishFailed: 0 }, budget, []);
    expect(byTarget).toMatchObject({ pass: false, limitedBy: 'target', reason: 'delivered 95% < 99%' });
    // A passing step keeps its rig flags as warnings: the figure stands, with a caveat.
    const passed = judgeStep({ deliveredPct: 100, p99Ms: 20, publishFailed: 0 }, budget, lag);
    expect(passed).toMatchObject({ pass: true, limitedBy: null });
    expect(passed.flags[0]!.severity).toBe('warning');
    expect(judgeStep({ deliveredPct: 100, p99Ms: 20, publishFailed: 3 }, budget, [])).toMatchObject({ pass: false, limitedBy: 'target', reason: 'target refused 3 publishes' });
  });

  it('flags connections the target did not seat', () => {
    expect(subscribeFlag(ready, 99)).toBeUndefined();
    expect(subscribeFlag({ ...ready, subscribed: 98, failed: 2, failureCauses: { ECONNRESET: 2 } }, 99)?.code).toBe('NOT_ALL_SUBSCRIBED');
  });
});
