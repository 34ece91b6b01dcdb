import { describe, expect, it } from 'vitest';
import { LatencyRecorder } from '../../engine/measure/latency.ts';
import { mergeWeather } from '../../runners/jitter/merge.ts';
import type { ConditionResult, WeatherResult } from '../../runners/jitter/weather.ts';
import { done, shardResult } from './fixtures.ts';
import { mergeShards } from './merge.ts';
import { testQuery } from '../coordinator/run.ts';
import type { ReboundError } from '../../lib/errors.ts';

/** A condition's figures as a run reports them, latencies through the project's recorder. */
function condition(name: ConditionResult['condition'], share: number, clients: number, msgs: number, lost: number, latenciesMs: number[], sleepRecoverMs?: number): ConditionResult {
  const rec = new LatencyRecorder();
  for (const v of latenciesMs) rec.recordMs(v);
  const enc = rec.encode();
  const spread = (v: number) => ({ count: v ? 1 : 0, p50: v, p95: v, max: v });
  return {
    condition: name,
    share,
    clients,
    proxies: 1,
    expectedDeliveries: clients * msgs,
    receivedDeliveries: clients * msgs - lost,
    lostDeliveries: lost,
    unconfirmedDeliveries: 0,
    deliveryRatePct: Math.round(((clients * msgs - lost) / (clients * msgs)) * 1e6) / 1e4,
    latencyRawMs: { avg: 0, p50: 0, p95: 0, p99: 0, max: 0, min: 0, count: enc.count },
    latencyOverMinMs: { avg: 0, p50: 0, p95: 0, p99: 0, max: 0, skewFloor: 0 },
    skewFloor: 0,
    latencyHistogram: enc,
    lossByCause: lost ? { session_expired: lost } : {},
    resumeOutcomes: lost ? { 'rejected:session_expired': 1 } : {},
    replayedDeliveries: 0,
    lateDeliveries: { liveP99Ms: null, late: 0, byPath: {} },
    disruptions: sleepRecoverMs ? [{ kind: 'blackhole', events: 1, affectedClients: 1, detectMs: spread(10), undetected: 0, recoverMs: spread(sleepRecoverMs), unrecovered: 0, resumedPct: 0, curve: [] }] : [],
  };
}

const weatherShard = (conditions: ConditionResult[], clients: number, msgs: number) => ({ ...shardResult({ clients, msgs, received: clients * msgs - conditions.reduce((n, c) => n + c.lostDeliveries, 0) }), weather: { spec: 'good-wifi:50,laptop-sleep:50', scale: 1, conditions } satisfies WeatherResult });

describe('network weather: merged condition by condition', () => {
  const s1 = weatherShard([condition('good-wifi', 50, 2, 10, 0, [5, 6, 7]), condition('laptop-sleep', 50, 2, 10, 4, [40, 50], 9000)], 4, 10);
  const s2 = weatherShard([condition('good-wifi', 50, 2, 10, 0, [3, 8]), condition('laptop-sleep', 50, 2, 10, 6, [30], 12_000)], 4, 10);

  it('the coordinator merges each condition as a fleet of its own: counts and causes summed, exact latency union, recovery combined', async () => {
    const { merged, validity } = await mergeShards([done('s1', s1), done('s2', s2)]);
    expect(validity.flags.map((f) => f.code)).not.toContain('SHARD_RESULT_INVALID');
    const w = merged.weather as WeatherResult;
    expect(w.conditions.map((c) => c.condition)).toEqual(['good-wifi', 'laptop-sleep']);
    const [wifi, sleep] = w.conditions as [ConditionResult, ConditionResult];
    expect(wifi).toMatchObject({ clients: 4, proxies: 2, expectedDeliveries: 40, lostDeliveries: 0, deliveryRatePct: 100 });
    expect(wifi.latencyRawMs).toMatchObject({ count: 5, min: 3, max: 8 });
    expect(wifi.latencyOverMinMs.skewFloor).toBe(3);
    expect(sleep).toMatchObject({ clients: 4, expectedDeliveries: 40, lostDeliveries: 10, deliveryRatePct: 75, lossByCause: { session_expired: 10 }, resumeOutcomes: { 'rejected:session_expired': 2 } });
    expect(sleep.latencyRawMs).toMatchObject({ count: 3, min: 30, max: 50 });
    expect(sleep.disruptions[0]).toMatchObject({ kind: 'blackhole', events: 2, recoverMs: { count: 2, p50: 10_500, max: 12_000 } });
    // The conditions add up to the fleet.
    expect(w.conditions.reduce((n, c) => n + c.lostDeliveries, 0)).toBe(merged.lostDeliveries);
  });

  it('the workers\' merge gives the same per-condition figures', () => {
    const w = mergeWeather([s1.weather, s2.weather])!;
    expect(w.conditions.map((c) => [c.condition, c.clients, c.lostDeliveries, c.latencyRawMs.count, c.lossByCause])).toEqual([
      ['good-wifi', 4, 0, 5, {}],
      ['laptop-sleep', 4, 10, 3, { session_expired: 10 }],
    ]);
  });

  it('a shard whose weather block is malformed is refused whole (SHARD_RESULT_INVALID); one whose condition histogram does not decode is left out of that condition only', async () => {
    const bad = { ...s2, weather: { ...s2.weather, conditions: [{ ...s2.weather.conditions[0]!, condition: 'snow' }] } };
    const r = await mergeShards([done('s1', s1), done('s2', bad)]);
    expect(r.validity.flags.find((f) => f.code === 'SHARD_RESULT_INVALID')?.message).toMatch(/weather condition "snow" is unknown or repeated/);
    const over = { ...s2, weather: { ...s2.weather, conditions: [s2.weather.conditions[0]!, { ...s2.weather.conditions[1]!, lostDeliveries: 999 }] } };
    expect((await mergeShards([done('s1', s1), done('s2', over)])).validity.flags.map((f) => f.code)).toContain('SHARD_RESULT_INVALID');
    const hostile = { ...s2, weather: { ...s2.weather, conditions: [s2.weather.conditions[0]!, { ...s2.weather.conditions[1]!, latencyHistogram: { ...s2.weather.conditions[1]!.latencyHistogram, histogram: 'HISTFAAAACl4nJNpmSzMwMDAyQABzFCaEUzOmgFhAwAi6QJ6' } }] } };
    const h = await mergeShards([done('s1', s1), done('s2', hostile)]);
    const sleep = (h.merged.weather as WeatherResult).conditions[1]!;
    expect(sleep.excludedShards).toEqual(['s2']);
    expect(sleep).toMatchObject({ clients: 2, lostDeliveries: 4 });
  });
});

describe('network weather at the coordinator: a bad population is refused before any shard is asked', () => {
  it.each([
    ['good-wifi:60,snow:40', /unknown weather condition "snow"; conditions: good-wifi/],
    ['good-wifi:60,lte:30', /sum to 90, not 100/],
    ['lte', /malformed weather share/],
  ])('%s', (weather, msg) => {
    expect(() => testQuery('jitter', { weather })).toThrow(msg);
    try {
      testQuery('jitter', { weather });
    } catch (err) {
      expect((err as ReboundError).code).toBe('RR_ERR_WEATHER_INVALID');
    }
  });

  it('a good one is forwarded as given (each shard deals its own slice by the same shares)', () => {
    expect(testQuery('jitter', { weather: 'good-wifi:60,lte:30,subway:10', n: 100 })).toEqual({ weather: 'good-wifi:60,lte:30,subway:10', n: '100' });
  });
});
