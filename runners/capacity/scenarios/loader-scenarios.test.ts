import { describe, expect, it } from 'vitest';
import { getTarget } from '../../../engine/targets/index.ts';
import type { ScenarioContext, ScenarioResult } from '../types.ts';
import { scenario as s3 } from './s3-fanout.ts';
import { scenario as s4 } from './s4-hot-stream.ts';
import { scenario as s5 } from './s5-latency.ts';
import { scenario as sweep, rigFreeAt } from './sweep.ts';

/** S3, S4, S5 and the sweep at small scale against every local target: real servers on port 0, real loader processes. */
const ctx = (name: string): ScenarioContext => ({ target: getTarget(name), seed: 7, signal: new AbortController().signal, log: () => undefined, progress: () => undefined });
const quick = { stepSec: 1, drainMs: 400, loaders: 2, warmupSec: 0 };
/**
 * Functional runs check delivery, not speed: the machine is shared, so the latency budget and the
 * rig ceilings are lifted here (the rig rules are tripped on purpose below and in rig.test.ts).
 */
const calm = { ...quick, maxP99Ms: 60_000, maxLoaderLagMs: 60_000, maxLoaderCpuPct: 1000, maxPublisherLateMs: 60_000, minMachineIdlePct: 0 };

function expectClean(r: ScenarioResult, target: string) {
  expect(r.target).toBe(target);
  expect(r.validity).toEqual({ valid: true, flags: [] });
  expect(r.steps.length).toBeGreaterThan(0);
  for (const s of r.steps) {
    expect(s.pass).toBe(true);
    expect(s.ledger!.lostDeliveries).toBe(0);
    expect(s.ledger!.duplicates).toBe(0);
    expect(s.ledger!.expectedDeliveries).toBe(s.ledger!.receivedDeliveries);
    expect(s.latencyEncoded!.count).toBe(s.ledger!.receivedDeliveries);
  }
}

describe.each(['replay', 'ws', 'socketio', 'socketio-csr'])('loader scenarios against %s', (target) => {
  it('S3 fan-out: every accepted message reaches each of its stream subscribers once; headline is the best step within budget', async () => {
    const r = await s3.run(ctx(target), s3.parse({ ...calm, connections: 40, streams: 4, rates: '20,60' }));
    expectClean(r, target);
    expect(r.steps.map((s) => s.step.publishRate)).toEqual([20, 60]);
    for (const s of r.steps) expect(s.ledger!.expectedDeliveries).toBe(Number(s.metrics.published) * 10);
    expect(r.headline.value).toBe(Math.max(...r.steps.map((s) => Number(s.metrics.deliveriesPerSec))));
    expect(r.failureMode).toMatch(/no step failed/);
    const charts = s3.sections([r])[0]!.charts;
    expect(charts.map((c) => c.id)).toEqual(['s3-p99', 's3-rate']);
    expect(charts[0]!.hlines?.[0]?.y).toBe(60_000);
  });

  it('S4 hot stream: publishers stepped on one stream, each its own sequence space', async () => {
    const r = await s4.run(ctx(target), s4.parse({ ...calm, connections: 20, publishers: '1,3', ratePerPublisher: 10 }));
    expectClean(r, target);
    expect(r.steps.map((s) => s.step.publishers)).toEqual([1, 3]);
    for (const s of r.steps) expect(s.ledger!.expectedDeliveries).toBe(Number(s.metrics.published) * 20);
    expect(s4.sections([r])[0]!.charts.length).toBe(2);
  });

  it('S5 latency at fixed load: percentiles and server CPU', async () => {
    const r = await s5.run(ctx(target), s5.parse({ ...calm, connections: 20, streams: 2, rate: 40 }));
    expectClean(r, target);
    const m = r.steps[0]!.metrics;
    expect(Number(m.p50Ms)).toBeLessThanOrEqual(Number(m.p99Ms));
    expect(Number(m.p99Ms)).toBeLessThanOrEqual(Number(m.p999Ms));
    expect(Number(m.p999Ms)).toBeLessThanOrEqual(Number(m.maxMs));
    expect(typeof m.serverCpuPct).toBe('number');
    expect(m.serverProcesses).toBe(1);
    expect(r.headline).toMatchObject({ value: m.p99Ms, unit: 'ms', higherIsBetter: false });
    expect(s5.sections([r])[0]!.charts.map((c) => c.id)).toContain('s5-p99');
  });

  it('sweep: K loaders at the same offered load, each K merged over its loaders', async () => {
    const r = await sweep.run(ctx(target), sweep.parse({ ...calm, connections: 20, streams: 2, rate: 40, loaderCounts: '1,2' }));
    expect(r.steps.map((s) => s.step.loaders)).toEqual([1, 2]);
    for (const s of r.steps) {
      expect(s.ledger!.lostDeliveries).toBe(0);
      expect(s.metrics.loaders).toBe(s.step.loaders);
      expect(s.metrics.rigFlags).toBe(0);
    }
    expect(r.headline.value).toBe(rigFreeAt(r.steps));
    expect(sweep.sections([r])[0]!.charts.length).toBe(3);
  });
});

describe.each(['replay', 'ws', 'socketio'])('loader scenarios against %s as --workers 2 (serverWorkers)', (target) => {
  it('S3 spreads the connections over the workers and still delivers every accepted message once, in order; params and metrics say so', async () => {
    const r = await s3.run({ ...ctx(target), serviceArgs: ['--workers', '2'] }, s3.parse({ ...calm, connections: 40, streams: 4, rates: '40' }));
    expectClean(r, target);
    expect(r.steps[0]!.ledger!.outOfOrder).toBe(0);
    expect(r.params).toMatchObject({ serverWorkers: 2 });
    // The primary and its two workers: CPU and RSS are the whole tree's.
    expect(r.steps[0]!.metrics.serverProcesses).toBe(3);
  });
});

describe('rig validity rules on a real run', () => {
  it('warms the target at the first step\'s load before the steps, logged and never judged or counted', async () => {
    const logs: string[] = [];
    const r = await s3.run({ ...ctx('replay'), log: (l) => logs.push(l) }, s3.parse({ ...calm, connections: 20, streams: 2, rates: '40', warmupSec: 1 }));
    expectClean(r, 'replay');
    expect(r.steps.map((s) => s.step.publishRate)).toEqual([40]);
    const warm = logs.find((l) => l.includes('warm-up'));
    expect(warm).toMatch(/warm-up \(1 s at the first step's load, not judged\): [1-9]\d* published/);
    // The step's ledger counts only its own messages: the warm-up used its own sequence spaces.
    expect(r.steps[0]!.ledger!.expectedDeliveries).toBe(Number(r.steps[0]!.metrics.published) * 10);
  });

  it('a step that misses its budget while a loader was saturated is blamed on the rig, and the run is invalid', async () => {
    // Every loader uses some CPU, so a 0% ceiling always fires; a 1 ms p99 budget fails the step.
    const r = await s3.run(ctx('replay'), s3.parse({ ...calm, connections: 20, streams: 2, rates: '200', maxLoaderCpuPct: 0, maxP99Ms: 1, minDeliveredPct: 100 }));
    const s = r.steps[0]!;
    if (s.pass) return expect(Number(s.metrics.p99Ms)).toBeLessThanOrEqual(1); // every delivery within 1 ms: nothing to blame
    expect(s.metrics.limitedBy).toBe('rig');
    expect(r.failureMode).toMatch(/^the rig at publishRate=200/);
    expect(r.validity.valid).toBe(false);
    expect(r.validity.flags).toContainEqual(expect.objectContaining({ code: 'RIG_LOADER_CPU', severity: 'fatal' }));
  });

  it('a machine that is never idle enough (ceiling 100%) blames a failing step on the rig: RIG_MACHINE_CPU from /proc/stat', async () => {
    const r = await s3.run(ctx('replay'), s3.parse({ ...calm, connections: 20, streams: 2, rates: '200', minMachineIdlePct: 100, maxP99Ms: 1, minDeliveredPct: 100 }));
    const s = r.steps[0]!;
    expect(Number(s.metrics.machineBusyPct)).toBeGreaterThan(0);
    if (s.pass) return expect(Number(s.metrics.p99Ms)).toBeLessThanOrEqual(1);
    expect(s.metrics.limitedBy).toBe('rig');
    expect(r.validity.flags).toContainEqual(expect.objectContaining({ code: 'RIG_MACHINE_CPU', severity: 'fatal' }));
  });

  it('a loader lag ceiling of 0 flags every step (the figure stands, with a warning, when the step passed)', async () => {
    const r = await s3.run(ctx('ws'), s3.parse({ ...calm, connections: 10, streams: 1, rates: '20', maxLoaderLagMs: 0 }));
    expect(r.steps[0]!.pass).toBe(true);
    expect(r.validity.valid).toBe(true);
    expect(r.validity.flags.map((f) => [f.code, f.severity])).toContainEqual(['RIG_LOADER_LOOP_LAG', 'warning']);
  });
});

describe('options', () => {
  it("take the suite's prefixed names (one merged table, no clashes) as well as bare ones", () => {
    expect(s3.parse({ s3Rates: '10,20', 's3-step-sec': '2' })).toMatchObject({ rates: '10,20', stepSec: 2 });
    expect(sweep.parse({ sweepLoaderCounts: '1,3' }).loaderCounts).toBe('1,3');
    const names = [s3, s4, s5, sweep].flatMap((m) => Object.keys(m.options ?? {}));
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(s4.options ?? {})).toContain('s4RatePerPublisher');
  });

  it('bad ones are refused with coded errors before anything starts', async () => {
    expect(() => s3.parse({ rates: '10,x' })).toThrow(expect.objectContaining({ code: 'RR_ERR_OPTION_INVALID' }));
    expect(() => s3.parse({ loaders: 0 })).toThrow(expect.objectContaining({ code: 'RR_ERR_OPTION_INVALID' }));
    expect(() => s4.parse({ nope: 1 })).toThrow(expect.objectContaining({ code: 'RR_ERR_OPTION_UNKNOWN' }));
    expect(() => sweep.parse({ loaderCounts: '1,0' })).toThrow(expect.objectContaining({ code: 'RR_ERR_OPTION_INVALID' }));
    await expect(s3.run(ctx('ws'), s3.parse({ ...quick, nodes: 2, connections: 4, streams: 1, rates: '1' }))).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
  });
});
