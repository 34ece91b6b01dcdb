import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatencyRecorder, sortedSamples } from '../../engine/measure/latency.ts';
import { benchEntry } from './routes.ts';
import { resolveTarget } from './targets.ts';
import { api, startRunner, tempResultsDir, type RunnerProcess } from './testing.ts';

/** The benchmark's parameters with the benchmark's meaning, on a real runner against local targets. */
const TOKEN = 'compat-token-0123456789abcdef';
const avalancheEntry = benchEntry('avalanche')!;
const post = (r: RunnerProcess, path: string) => api(r.url, path, { method: 'POST', token: TOKEN });

describe('sortedSamples', () => {
  it('at most cap evenly spaced sorted values, first and last exact', () => {
    const rec = new LatencyRecorder();
    for (let i = 1; i <= 1000; i++) rec.recordMs(i);
    const s = sortedSamples(rec.encode(), 11);
    expect(s).toHaveLength(11);
    expect(s[0]).toBe(1);
    expect(s.at(-1)).toBe(1000);
    expect([...s].sort((a, b) => a - b)).toEqual(s);
    expect(s[5]).toBeCloseTo(500.5, -1);
    expect(sortedSamples(rec.encode(), 0)).toEqual([]);
    expect(sortedSamples(new LatencyRecorder().encode(), 5)).toEqual([]);
  });
});

describe('avalanche prearm / recoveryWait', () => {
  it('drive the wait before the restart and the recovery timeout; naming both spellings is a 400', () => {
    const t = resolveTarget('ws', {});
    const p = avalancheEntry.prepare({ n: '3', prearm: '60', recoveryWait: '180' }, t);
    expect(p.opts).toMatchObject({ opts: { warmupMs: 60_000, recoveryTimeoutMs: 180_000 } });
    expect(p.effectiveParams).toMatchObject({ prearm: 60, recoveryWait: 180, warmupMs: 60_000 });
    expect(() => avalancheEntry.prepare({ prearm: '60', warmupMs: '5000' }, t)).toThrow(/"prearm" and "warmupMs"/);
    expect(() => avalancheEntry.prepare({ reconnectMode: 'tuned', reconnectBaseMs: '500' }, t)).not.toThrow();
  });
});

describe('runner: the benchmark parameters', () => {
  let runner: RunnerProcess;
  beforeAll(async () => {
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir() });
  }, 30_000);
  afterAll(async () => {
    await runner?.stop();
  });

  it("jitter=999999 is the latency mode (no drops), samplesCap adds latencySamplesSorted, label is echoed, and the benchmark's fields are there", async () => {
    const r = await post(runner, '/bench-jitter-ws?n=4&msgs=20&interval=20&jitter=999999&duration=2&settle=300&samplesCap=7&label=lat-ws');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ label: 'lat-ws', publishedMessages: 20, jitterEvents: 0, avgJittersPerClient: 0, latencySamples: 80, csrResumes: 0, sessionRestores: 0, targetServer: 'ws' });
    expect(r.body.latencySamplesSorted).toHaveLength(7);
    expect([...r.body.latencySamplesSorted].sort((a: number, b: number) => a - b)).toEqual(r.body.latencySamplesSorted);
    const plain = await post(runner, '/bench-latency-socketio?n=2&msgs=5&interval=20&settle=300');
    expect(plain.body).toMatchObject({ label: 'socketio-default', csrResumes: 0, latencySamples: 10 });
    expect(plain.body).not.toHaveProperty('latencySamplesSorted');
  }, 60_000);

  it('duration is the drop window: drops go on after publishing ended, until duration', async () => {
    // Publishing takes 100 ms; with jitter=1 and duration=8 every client is dropped within 1..6 s.
    const r = await post(runner, '/bench-jitter-ws?n=3&msgs=5&interval=20&jitter=1&jitterMs=100&duration=8&settle=300&seed=11');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.jitterEvents).toBeGreaterThanOrEqual(3);
    expect(r.body.avgJittersPerClient).toBeGreaterThanOrEqual(1);
    expect(r.body.elapsedMs).toBeGreaterThan(1000);
    // The same run without duration: jitter (1 s) is at or above the 100 ms window, so no drops.
    const none = await post(runner, '/bench-jitter-ws?n=3&msgs=5&interval=20&jitter=1&jitterMs=100&settle=300&seed=11');
    expect(none.body.jitterEvents).toBe(0);
  }, 60_000);

  it('AnyCable routes: session restores in their own field, csrResumes 0', async () => {
    const r = await post(runner, '/bench-jitter-replay?n=3&msgs=30&interval=50&jitter=1&jitterMs=200&duration=7&settle=1000&seed=5&channel=$pubsub&acProtocol=actioncable-v1-ext-json&clientLib=anycable&reconnectMode=tuned&reconnectBaseMs=500');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ label: 'replay', csrResumes: 0, targetServer: 'replay' });
    expect(r.body.sessionRestores).toBeGreaterThan(0);
  }, 60_000);

  it('refuses what cannot apply here with a 400 that says why', async () => {
    const cases: [string, string, RegExp][] = [
      ['/bench-jitter-anycable?channel=BenchmarkChannel', 'channel', /Rails RPC backend/],
      ['/bench-jitter-anycable?clientLib=actioncable', 'clientLib', /@rails\/actioncable, which is not installed/],
      ['/bench-jitter-anycable?acProtocol=actioncable-v1-json', 'acProtocol', /actioncable-v1-ext-json only/],
      ['/bench-jitter-anycable?reconnectBaseMs=700', 'reconnectBaseMs', /add reconnectMode=tuned/],
      ['/bench-jitter-socketio?reconnectMode=tuned&reconnectBaseMs=700', 'reconnectBaseMs', /reconnects these clients itself/],
      ['/bench-jitter-ws?channel=$pubsub', 'channel', /AnyCable routes/],
      ['/bench-idle-anycable?channel=Chat', 'channel', /Rails RPC backend/],
      ['/bench-jitter-ws?label=a%0Ab', 'label', /control characters/],
    ];
    for (const [path, option, why] of cases) {
      const r = await post(runner, path);
      expect(r.status, path).toBe(400);
      expect(r.body.details.option, path).toBe(option);
      expect(r.body.message, path).toMatch(why);
    }
  });
});
