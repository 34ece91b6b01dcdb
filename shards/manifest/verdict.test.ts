import { describe, expect, it } from 'vitest';
import { bootstrapMedianDiff, judgeOne, judgeRepeat } from './verdict.ts';
import { exitCodeOf, judge, refusedUpdates, updateBaselines } from './rebaseline.ts';
import type { TestSpec } from './schema.ts';

const lower = (value: number | null, extra = {}) => ({ value, direction: 'lower' as const, driftThresholdPct: 10, ...extra });
const higher = (value: number | null, extra = {}) => ({ value, direction: 'higher' as const, driftThresholdPct: 10, ...extra });

describe('judgeOne: one run against a fixed baseline', () => {
  it('ok within the drift threshold, drift past it in the bad direction, improved past it in the good one', () => {
    expect(judgeOne('latencyOverMinMs.p99', lower(100), 109)).toMatchObject({ verdict: 'ok', delta: 9, deltaPct: 9 });
    expect(judgeOne('latencyOverMinMs.p99', lower(100), 111)).toMatchObject({ verdict: 'drift', deltaPct: 11 });
    expect(judgeOne('latencyOverMinMs.p99', lower(100), 80)).toMatchObject({ verdict: 'improved' });
    expect(judgeOne('csrResumeRatePct', higher(90), 80)).toMatchObject({ verdict: 'drift' });
  });

  it('regress past the hard threshold, and on a delivery rate more than 1 point under its baseline', () => {
    expect(judgeOne('latencyOverMinMs.p99', lower(100, { hardThreshold: 500 }), 501)).toMatchObject({ verdict: 'regress', reason: 'past the hard threshold 500' });
    expect(judgeOne('deliveryRatePct', { value: 100, direction: 'higher', driftThresholdPct: 5 }, 98.9)).toMatchObject({ verdict: 'regress' });
    expect(judgeOne('deliveryRatePct', { value: 100, direction: 'higher', driftThresholdPct: 0.5 }, 99.2)).toMatchObject({ verdict: 'drift' });
  });

  it('a zero baseline drifts on any worsening; no baseline is new; an absent field is missing', () => {
    expect(judgeOne('lostDeliveries', lower(0), 3)).toMatchObject({ verdict: 'drift', delta: 3, deltaPct: null });
    expect(judgeOne('lostDeliveries', lower(0), 0)).toMatchObject({ verdict: 'ok' });
    expect(judgeOne('lostDeliveries', lower(null), 3)).toMatchObject({ verdict: 'new' });
    expect(judgeOne('lostDeliveries', lower(null, { hardThreshold: 1 }), 3)).toMatchObject({ verdict: 'regress' });
    expect(judgeOne('nope', lower(1), undefined)).toMatchObject({ verdict: 'missing' });
  });
});

describe('judgeRepeat: K runs against the baseline runs', () => {
  const base = [100, 104, 97, 110, 95, 102, 99];
  it('noise around the baseline stays ok even when single runs would drift', () => {
    const runs = [96, 112, 101, 99, 108];
    expect(judgeOne('p99', lower(100, { samples: base }), 112).verdict).toBe('drift');
    expect(judgeRepeat('p99', lower(100, { samples: base }), runs)).toMatchObject({ verdict: 'ok', measured: 101 });
  });

  it('a shift the noise cannot explain drifts, and a large one regresses', () => {
    expect(judgeRepeat('p99', lower(100, { samples: base }), [140, 150, 145, 139, 160])).toMatchObject({ verdict: 'drift' });
    expect(judgeRepeat('p99', lower(100, { samples: base, hardThreshold: 130 }), [140, 150, 145, 139, 160])).toMatchObject({ verdict: 'regress' });
  });

  it('a median past the hard threshold regresses even when the interval reaches the baseline', () => {
    // Baseline runs this noisy would let a 135 pass on the interval alone.
    const wide = [60, 100, 140];
    expect(judgeRepeat('p99', lower(100, { samples: wide }), [135])).toMatchObject({ verdict: 'ok' });
    expect(judgeRepeat('p99', lower(100, { samples: wide, hardThreshold: 130 }), [135])).toMatchObject({ verdict: 'regress', reason: 'past the hard threshold 130' });
  });

  it('one run is judged on the baseline runs\' spread when there are several, on the value alone otherwise', () => {
    // jitter-replay-partition-small's three baseline runs: 81.2 (median), 84.2, 77.6.
    const d = (samples?: number[]) => ({ deliveryRatePct: { value: 81.2, direction: 'higher' as const, driftThresholdPct: 1, hardThreshold: 75, ...(samples ? { samples } : {}) } });
    const walk = (baseline: TestSpec['baseline'], v: number) => judge({ ...spec, baseline }, [stored(v, 0)]).metrics[0]!;
    expect(walk(d(), 78).verdict).toBe('regress');
    expect(walk(d([81.2, 84.2, 77.6]), 78).verdict).toBe('ok');
    expect(walk(d([81.2, 84.2, 77.6]), 75.5).verdict).toBe('regress');
    expect(walk(d([81.2, 84.2, 77.6]), 74).reason).toBe('past the hard threshold 75');
  });

  it('the bootstrap is seeded: the same runs give the same interval', () => {
    expect(bootstrapMedianDiff([1, 2, 3, 4, 5], [3])).toEqual(bootstrapMedianDiff([1, 2, 3, 4, 5], [3]));
    const [lo, hi] = bootstrapMedianDiff([10, 11, 12, 13, 14], [2]);
    expect(lo).toBeGreaterThanOrEqual(8);
    expect(hi).toBeLessThanOrEqual(12);
  });
});

const spec: TestSpec = {
  id: 't',
  category: 'jitter',
  runner: 'jitter',
  target: 'ws',
  params: { seed: 1 },
  baseline: { deliveryRatePct: { value: 100, direction: 'higher', driftThresholdPct: 1 }, 'latencyOverMinMs.p99': { value: 10, direction: 'lower', driftThresholdPct: 50, hardThreshold: 100 } },
};
const stored = (deliveryRatePct: number, p99: number, valid = true) => ({
  ref: 'local',
  valid,
  result: { deliveryRatePct, latencyOverMinMs: { p99 }, validity: { valid, flags: valid ? [] : [{ code: 'NOTHING_PUBLISHED', severity: 'fatal', message: 'the publisher delivered nothing' }] } },
});

describe('verdicts and exit codes on stored results', () => {
  it('ok → 0, drift → 0, regress → 1, invalid → 2', () => {
    const ok = judge(spec, [stored(100, 11)]);
    const drift = judge(spec, [stored(100, 16)]);
    const regress = judge(spec, [stored(97, 11)]);
    const invalid = judge(spec, [stored(100, 11, false)]);
    expect([ok.verdict, drift.verdict, regress.verdict, invalid.verdict]).toEqual(['ok', 'drift', 'regress', 'invalid']);
    expect([ok, drift, regress, invalid].map((r) => exitCodeOf([r]))).toEqual([0, 0, 1, 2]);
    expect(exitCodeOf([ok, drift, regress])).toBe(1);
    expect(exitCodeOf([regress, invalid])).toBe(2);
  });

  it('an invalid run is never a pass, even with perfect numbers, and says why', () => {
    const r = judge(spec, [stored(100, 10, false)]);
    expect(r.verdict).toBe('invalid');
    expect(r.valid).toBe(false);
    expect(r.errors[0]).toContain('NOTHING_PUBLISHED');
    expect(judge(spec, [stored(100, 10), stored(100, 10, false)]).verdict).toBe('invalid');
  });

  it('a run that failed to produce a result is failed', () => {
    const r = judge(spec, [{ ref: 'error', valid: false, error: 'ECONNREFUSED', result: null }]);
    expect(r.verdict).toBe('failed');
    expect(exitCodeOf([r])).toBe(2);
  });

  it('--update writes medians, the runs and the run id, and skips invalid tests', () => {
    const m = { version: 1 as const, tests: [spec, { ...spec, id: 'u' }] };
    const rec = (id: string, valid: boolean, vals: number[]) => ({
      id, runId: '2026-01-01T00-00-00-000Z', runAt: '2026-01-01T00:00:00.000Z', commit: null, where: 'local', runner: 'jitter', target: 'ws', params: {}, repeat: vals.length, valid, verdict: 'ok' as const, errors: [], metrics: [],
      executions: vals.map((v) => stored(100, v, valid)),
    });
    const next = updateBaselines(m, [rec('t', true, [12, 10, 11]), rec('u', false, [50])]);
    expect(next.tests[0]!.baseline['latencyOverMinMs.p99']).toMatchObject({ value: 11, samples: [12, 10, 11], runIds: ['2026-01-01T00-00-00-000Z'], direction: 'lower', hardThreshold: 100 });
    expect(next.tests[1]!.baseline).toEqual(spec.baseline);
  });

  it('--update never makes a value past its own hard threshold the baseline (a broken server\'s 0% delivery)', () => {
    // whispers-socketio-small's baseline became 0% this way while the Socket.IO server had no whisper relay.
    const s: TestSpec = { ...spec, baseline: { deliveryRatePct: { value: 100, direction: 'higher', driftThresholdPct: 0.5, hardThreshold: 99 }, 'latencyOverMinMs.p99': lower(40) } };
    const m = { version: 1 as const, tests: [s] };
    const rec = (d: number) => ({ id: 't', runId: 'r', runAt: 'now', commit: null, where: 'local', runner: 'jitter', target: 'ws', params: {}, repeat: 1, valid: true, verdict: 'regress' as const, errors: [], metrics: [], executions: [stored(d, 0)] });
    expect(refusedUpdates(m, [rec(0)])).toEqual([{ id: 't', reason: expect.stringContaining('deliveryRatePct 0 is past its hard threshold 99') }]);
    expect(updateBaselines(m, [rec(0)]).tests[0]!.baseline).toEqual(s.baseline);
    expect(refusedUpdates(m, [rec(99.5)])).toEqual([]);
    expect(updateBaselines(m, [rec(99.5)]).tests[0]!.baseline.deliveryRatePct!.value).toBe(99.5);
  });
});
