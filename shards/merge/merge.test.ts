import { describe, expect, it } from 'vitest';
import { LatencyRecorder, summarize } from '../../engine/measure/latency.ts';
import { mergeShards } from './merge.ts';
import { resultProblem } from './schema.ts';
import { done, shardResult, tailLatencies } from './fixtures.ts';
import type { ShardOutcome } from './types.ts';

const exactPct = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;

describe('mergeShards: latency', () => {
  it('two shards with known data: the merged percentiles are the union\'s', async () => {
    // Shard A holds 1..1000 ms, shard B 1001..2000 ms: the union is 1..2000 ms.
    const a = Array.from({ length: 1000 }, (_, i) => i + 1);
    const b = Array.from({ length: 1000 }, (_, i) => i + 1001);
    const { merged } = await mergeShards([done('s1', shardResult({ clients: 10, msgs: 100, latenciesMs: a })), done('s2', shardResult({ clients: 10, msgs: 100, latenciesMs: b }))]);
    const raw = merged.latencyRawMs as { p50: number; p95: number; p99: number; max: number; min: number; count: number };
    expect(raw.count).toBe(2000);
    // HdrHistogram with 3 significant digits: within 0.1% of the exact order statistic.
    expect(raw.p50).toBeCloseTo(1000, -1);
    expect(Math.abs(raw.p50 - 1000) / 1000).toBeLessThan(0.001);
    expect(Math.abs(raw.p95 - 1900) / 1900).toBeLessThan(0.001);
    expect(Math.abs(raw.p99 - 1980) / 1980).toBeLessThan(0.001);
    expect(raw.min).toBe(1);
    expect(raw.max).toBe(2000);
    // Averaging the shards' p99s (~990 and ~1990) would give ~1490: far from the union's.
    expect(raw.p99).toBeGreaterThan(1970);
  });

  it('50 shards of long-tailed data: identical to one histogram of the union, and within precision of the exact order statistics', async () => {
    const parts = Array.from({ length: 50 }, (_, i) => tailLatencies(100 + i, 400, 5 + i));
    const outcomes = parts.map((l, i) => done(`s${i + 1}`, shardResult({ clients: 4, msgs: 100, latenciesMs: l })));
    const { merged } = await mergeShards(outcomes);
    const all = new LatencyRecorder();
    for (const l of parts) for (const v of l) all.recordMs(v);
    const union = summarize(all.encode());
    expect(merged.latencyRawMs).toEqual(union.latencyRawMs);
    expect(merged.latencyOverMinMs).toEqual(union.latencyOverMinMs);
    const sorted = parts.flat().sort((x, y) => x - y);
    const raw = merged.latencyRawMs as Record<string, number>;
    for (const p of [50, 95, 99]) {
      const exact = exactPct(sorted, p);
      expect(Math.abs(raw[`p${p}`]! - exact) / exact, `p${p}`).toBeLessThan(0.002);
    }
  });

  it('min-normalises after the merge with the union\'s floor, and keeps each shard\'s figures and skew estimate', async () => {
    const { merged, perShard } = await mergeShards([
      done('s1', shardResult({ clients: 1, msgs: 3, latenciesMs: [10, 20, 30] })),
      done('s2', shardResult({ clients: 1, msgs: 3, latenciesMs: [40, 50, 60] })),
      done('s3', shardResult({ clients: 1, msgs: 3, latenciesMs: [12, 22, 32] })),
    ]);
    expect(merged.skewFloor).toBe(10);
    expect((merged.latencyOverMinMs as { max: number }).max).toBe(50);
    expect(perShard.map((s) => s.latency!.min)).toEqual([10, 40, 12]);
    // Median floor is 12 ms: s2's path sits 28 ms above the others.
    expect(perShard.map((s) => s.skewEstimateMs)).toEqual([-2, 28, 0]);
  });
});

describe('mergeShards: counts and fleet validity', () => {
  it('adds counts and recomputes rates from the sums', async () => {
    const { merged, validity } = await mergeShards([
      done('s1', shardResult({ clients: 100, msgs: 10, received: 1000 })),
      done('s2', shardResult({ clients: 100, msgs: 10, connected: 90, received: 850 })),
    ], { perShardN: 100 });
    expect(merged).toMatchObject({ clients: 200, connectedClients: 190, expectedDeliveries: 2000, receivedDeliveries: 1850, lostDeliveries: 150, deliveryRatePct: 92.5 });
    expect(merged.deliveryRateOfConnectedPct).toBe(Math.round((1850 / 1900) * 1e6) / 1e4);
    expect(validity.valid).toBe(true);
    expect(validity.flags).toEqual([]);
  });

  it('a failed or timed-out shard is named and its clients are not counted as loss', async () => {
    const outcomes: ShardOutcome[] = [
      done('s1', shardResult({ clients: 100, msgs: 10 })),
      { name: 's2', url: 'http://127.0.0.1:1', status: 'unreachable', error: 'ECONNREFUSED', durationMs: 5 },
      { name: 's3', url: 'http://127.0.0.1:2', status: 'timeout', jobId: 'j3', error: 'no answer in 1000 ms', durationMs: 1000 },
    ];
    const { merged, validity, perShard } = await mergeShards(outcomes, { perShardN: 100 });
    expect(merged).toMatchObject({ clients: 100, expectedDeliveries: 1000, lostDeliveries: 0, deliveryRatePct: 100 });
    const f = validity.flags.find((x) => x.code === 'SHARD_FAILED')!;
    expect(f.shards).toEqual(['s2', 's3']);
    expect(f.message).toContain('ECONNREFUSED');
    expect(perShard[1]).toMatchObject({ status: 'unreachable', error: 'ECONNREFUSED', connected: null });
  });

  it('no shard succeeding is fatal', async () => {
    const { validity } = await mergeShards([{ name: 's1', url: 'u', status: 'failed', error: 'boom', durationMs: 1 }]);
    expect(validity.valid).toBe(false);
    expect(validity.flags.map((f) => f.code)).toContain('NO_SHARD_SUCCEEDED');
  });

  it('uniform-shard-ceiling fires when every shard stopped at one count below 0.99 of its target, and only then', async () => {
    const at = (c: number[]) => mergeShards(c.map((n, i) => done(`s${i}`, shardResult({ clients: 1000, connected: n, msgs: 1 }))), { perShardN: 1000 });
    const flagged = await at([812, 812, 812]);
    expect(flagged.validity.valid).toBe(false);
    expect(flagged.validity.flags[0]).toMatchObject({ code: 'UNIFORM_SHARD_CEILING', severity: 'fatal' });
    expect((await at([812, 813, 812])).validity.flags.map((f) => f.code)).not.toContain('UNIFORM_SHARD_CEILING');
    expect((await at([995, 995])).validity.flags.map((f) => f.code)).not.toContain('UNIFORM_SHARD_CEILING');
  });

  it('partial-publisher-silence fires when some shards published nothing', async () => {
    const { validity } = await mergeShards([done('s1', shardResult({ clients: 10, msgs: 10 })), done('s2', shardResult({ clients: 10, msgs: 10, published: 0, received: 0 }))]);
    expect(validity.flags.find((f) => f.code === 'PARTIAL_PUBLISHER_SILENCE')).toMatchObject({ severity: 'fatal', shards: ['s2'] });
  });

  it('a shard whose p99 is far above the others is called out', async () => {
    const fast = [5, 6, 7, 8, 9];
    const { validity } = await mergeShards([
      done('s1', shardResult({ clients: 1, msgs: 5, latenciesMs: fast })),
      done('s2', shardResult({ clients: 1, msgs: 5, latenciesMs: fast })),
      done('s3', shardResult({ clients: 1, msgs: 5, latenciesMs: [300, 310, 320, 330, 400] })),
    ]);
    expect(validity.flags.find((f) => f.code === 'SHARD_LATENCY_OUTLIER')).toMatchObject({ severity: 'warning', shards: ['s3'] });
  });

  it('a shard\'s own fatal flag makes the fleet invalid and names the shard', async () => {
    const { validity } = await mergeShards([done('s1', shardResult({ clients: 1, msgs: 1 })), done('s2', shardResult({ clients: 1, msgs: 1, fatal: 'RUNNER_FD_LIMIT' }))]);
    expect(validity.valid).toBe(false);
    expect(validity.flags.find((f) => f.code === 'SHARD_INVALID')).toMatchObject({ shards: ['s2'] });
    expect(validity.flags[0]!.message).toContain('RUNNER_FD_LIMIT');
  });
});

describe('mergeShards: shared-stream clock correction', () => {
  const clock = (offsetMs: number, uncertaintyMs: number) => ({ offsetMs, uncertaintyMs, rttMs: uncertaintyMs * 2, beforeMs: offsetMs, afterMs: offsetMs });

  it('removes each shard\'s offset from the publisher before merging', async () => {
    const truth = [10, 11, 12, 13, 14];
    // s2's clock runs 50 ms ahead of the publisher (s1): its raw latencies read 50 ms long.
    const a = { ...done('s1', shardResult({ clients: 1, msgs: 5, latenciesMs: truth })), clock: clock(0, 0.2) };
    const b = { ...done('s2', shardResult({ clients: 1, msgs: 5, latenciesMs: truth.map((v) => v + 50) })), clock: clock(50, 0.3) };
    const { merged, perShard, validity } = await mergeShards([a, b], { mode: 'shared', publisher: 's1' });
    expect((merged.latencyRawMs as { max: number; min: number })).toMatchObject({ min: 10, max: 14 });
    expect(perShard[1]!.latency!.min).toBe(10);
    expect(perShard[1]!.clock!.offsetMs).toBe(50);
    expect(validity.valid).toBe(true);
  });

  it('flags a run whose clock uncertainty exceeds the latencies it reports', async () => {
    const a = { ...done('s1', shardResult({ clients: 1, msgs: 3, latenciesMs: [1, 2, 3] })), clock: clock(0, 0.1) };
    const b = { ...done('s2', shardResult({ clients: 1, msgs: 3, latenciesMs: [1, 2, 3] })), clock: clock(0, 40) };
    const { validity } = await mergeShards([a, b], { mode: 'shared', publisher: 's1' });
    expect(validity.flags.find((f) => f.code === 'CLOCK_UNCERTAINTY_EXCEEDS_LATENCY')).toMatchObject({ severity: 'fatal', shards: ['s2'] });
  });
});

describe('mergeShards: shared stream, subscribers judged on the publisher\'s accepted set', () => {
  // s1 published 10 messages; the target refused seq 4 (publisher's failure) and accepted 9.
  const c0 = { offsetMs: 0, uncertaintyMs: 0.1, rttMs: 0.2, beforeMs: 0, afterMs: 0 };
  const pub = () => ({ ...done('s1', { ...shardResult({ clients: 2, msgs: 10, published: 9, received: 18, latenciesMs: [1, 2] }), role: 'publisher', acceptedSeqs: '1-3,5-10', publishFailures: 1, expectedDeliveries: 18, lostDeliveries: 0, deliveryRatePct: 100 }), clock: c0 });
  // s2's 3 clients: every accepted seq reached all 3 except seq 7 (2 of them); the refused seq 4 reached nobody.
  const arrivals = [3, 3, 3, 0, 3, 3, 2, 3, 3, 3];
  const sub = (a: number[] = arrivals) => ({ ...done('s2', { ...shardResult({ clients: 3, msgs: 10, received: 26, latenciesMs: [5] }), role: 'subscriber', arrivalsBySeq: a, perfectClients: 2, published: 9 }), clock: c0 });

  it('a message the target refused is never a subscriber\'s loss; an accepted one it missed is', async () => {
    const { merged, perShard, validity } = await mergeShards([pub(), sub()], { mode: 'shared', publisher: 's1' });
    // s2: expected 3 x 9 accepted = 27, received 26, lost 1 (seq 7 at one client), nothing for seq 4.
    expect(perShard[1]).toMatchObject({ receivedDeliveries: 26, lostDeliveries: 1, deliveryRatePct: 96.2963 });
    expect(merged).toMatchObject({ expectedDeliveries: 18 + 27, receivedDeliveries: 18 + 26, lostDeliveries: 1, published: 9, publishedTotal: 9, publishFailures: 1, perfectClients: 2 });
    expect(merged.deliveryRatePct).toBe(Math.round((44 / 45) * 1e6) / 1e4);
    expect(validity.flags.map((f) => f.code)).toEqual([]);
  });

  it('an accepted seq none of a subscriber\'s clients got leaves it no perfect client; a refused seq that arrived is unaccepted, not received-as-expected', async () => {
    const { perShard, merged } = await mergeShards([pub(), sub([3, 3, 3, 1, 3, 3, 0, 3, 3, 3])], { mode: 'shared', publisher: 's1' });
    expect(perShard[1]).toMatchObject({ receivedDeliveries: 25, lostDeliveries: 3 });
    expect(merged).toMatchObject({ perfectClients: 0, unacceptedDeliveries: 1 });
  });

  it('a dead publisher makes every subscriber\'s deliveries unjudgeable: fatal, never counted as loss', async () => {
    const dead = { name: 's1', url: 'http://127.0.0.1/s1', status: 'timeout' as const, durationMs: 1, error: 'no final status' };
    const { merged, validity } = await mergeShards([dead, sub()], { mode: 'shared', publisher: 's1' });
    expect(merged.lostDeliveries).toBeUndefined();
    expect(merged.expectedDeliveries).toBeUndefined();
    expect(validity.flags.find((f) => f.code === 'SHARED_PUBLISHER_FAILED')).toMatchObject({ severity: 'fatal', shards: ['s1'] });
    expect(validity.valid).toBe(false);
  });

  it('a publisher the target refused everything from makes the run invalid, and no subscriber loses anything', async () => {
    const silent = { ...done('s1', { ...shardResult({ clients: 2, msgs: 10, published: 0, received: 0, fatal: 'NOTHING_PUBLISHED' }), role: 'publisher', acceptedSeqs: '', publishFailures: 10, expectedDeliveries: 0, lostDeliveries: 0 }), clock: c0 };
    const { merged, validity } = await mergeShards([silent, sub(new Array(10).fill(0))], { mode: 'shared', publisher: 's1' });
    expect(merged).toMatchObject({ expectedDeliveries: 0, lostDeliveries: 0, published: 0 });
    expect(validity.flags.find((f) => f.code === 'SHARD_INVALID')).toMatchObject({ severity: 'fatal', shards: ['s1'] });
    expect(validity.valid).toBe(false);
  });

  it('a subscriber that reports arrivals for another message count is flagged, not merged', async () => {
    const { merged, validity } = await mergeShards([pub(), sub([3, 3, 3])], { mode: 'shared', publisher: 's1' });
    expect(validity.flags.find((f) => f.code === 'SHARED_SUBSCRIBER_MISMATCH')).toMatchObject({ severity: 'fatal', shards: ['s2'] });
    expect(merged.expectedDeliveries).toBe(18);
  });
});

describe('mergeShards: fleet rules over the merged figures', () => {
  it('a merged delivery over 100% (each shard\'s expected understated) is fatal, never "valid"', async () => {
    const over = { ...shardResult({ clients: 10, msgs: 10 }), published: 5, expectedDeliveries: 50, receivedDeliveries: 100, lostDeliveries: 0 };
    const { merged, validity } = await mergeShards([done('s1', over), done('s2', over)]);
    expect(merged.deliveryRatePct).toBe(200);
    expect(validity.valid).toBe(false);
    expect(validity.flags.map((f) => f.code)).toEqual(expect.arrayContaining(['FLEET_DELIVERY_OVER_100', 'FLEET_RECEIVED_OVER_EXPECTED']));
    expect(validity.flags.find((f) => f.code === 'FLEET_DELIVERY_OVER_100')!.severity).toBe('fatal');
  });

  it('deliveries a publisher saw fail (unaccepted) may push received over expected without the flag', async () => {
    const r = { ...shardResult({ clients: 10, msgs: 10 }), unacceptedDeliveries: 10, receivedDeliveries: 100, expectedDeliveries: 90, lostDeliveries: 0 };
    const { validity } = await mergeShards([done('s1', r), done('s2', r)]);
    expect(validity.flags.map((f) => f.code)).not.toContain('FLEET_RECEIVED_OVER_EXPECTED');
  });

  it('every shard at one ceiling is flagged from the clients each was asked, without PER_SHARD_N', async () => {
    const { validity } = await mergeShards([812, 812].map((c, i) => done(`s${i + 1}`, shardResult({ clients: 1000, connected: c, msgs: 1 }))));
    expect(validity.flags.find((f) => f.code === 'UNIFORM_SHARD_CEILING')).toMatchObject({ severity: 'fatal' });
  });

  it('every shard\'s own warnings are carried into the fleet\'s flags with the shards that raised them', async () => {
    const warn = (code: string, message: string) => ({ ...shardResult({ clients: 10, msgs: 10 }), validity: { valid: true, flags: [{ code, severity: 'warning' as const, message }] } });
    const { validity } = await mergeShards([done('s1', warn('CONNECT_FAILURES', '2 of 10 clients never connected')), done('s2', warn('RUNNER_LOOP_LAG', 'event loop p99 420 ms')), done('s3', warn('CONNECT_FAILURES', '1 of 10'))]);
    expect(validity.valid).toBe(true);
    expect(validity.flags.find((f) => f.code === 'RUNNER_LOOP_LAG')).toMatchObject({ severity: 'warning', shards: ['s2'], message: 's2: event loop p99 420 ms' });
    expect(validity.flags.find((f) => f.code === 'CONNECT_FAILURES')).toMatchObject({ severity: 'warning', shards: ['s1', 's3'] });
  });

  it('a malformed result given straight to the merge is screened out, not a crash', async () => {
    const bad = { ...shardResult({ clients: 10, msgs: 10 }), validity: {} } as unknown as ReturnType<typeof shardResult>;
    const { merged, perShard, validity } = await mergeShards([done('s1', shardResult({ clients: 10, msgs: 10 })), done('s2', bad)]);
    expect(perShard[1]).toMatchObject({ status: 'invalid' });
    expect(merged).toMatchObject({ clients: 10, lostDeliveries: 0 });
    expect(validity.flags.find((f) => f.code === 'SHARD_RESULT_INVALID')!.shards).toEqual(['s2']);
  });
});

describe('shard result schema: the idle funnel', () => {
  const idle = (f: Record<string, number>) => ({ ...shardResult({ clients: 10, msgs: 10 }), ...f });
  it('a client that connected and then timed out before subscribing is in connected and in failed: valid', async () => {
    // The 1M local-fleet run at 2a50796: every shard had connected + failed > clients and all 20 were refused.
    expect(resultProblem(idle({ connected: 9, welcomed: 9, subscribed: 7, failed: 3 }))).toBeUndefined();
    const { merged, perShard } = await mergeShards([done('s1', idle({ connected: 9, welcomed: 9, subscribed: 7, failed: 3 })), done('s2', idle({ connected: 10, welcomed: 10, subscribed: 10, failed: 0 }))]);
    expect(perShard.map((p) => p.status)).toEqual(['done', 'done']);
    expect(merged).toMatchObject({ clients: 20 });
  });
  it('subscribed + failed above clients, or a later stage above an earlier one, is refused with the numbers', () => {
    expect(resultProblem(idle({ connected: 10, welcomed: 10, subscribed: 8, failed: 3 }))).toBe('subscribed 8 + failed 3 exceeds clients 10');
    expect(resultProblem(idle({ connected: 9, welcomed: 10, subscribed: 9, failed: 0 }))).toBe('welcomed 10 exceeds connected 9');
    expect(resultProblem(idle({ connected: 9, failed: 2 }))).toBe('connected 9 + failed 2 exceeds clients 10');
  });
});

describe("mergeShards: a user's target file (targetModule)", () => {
  const withModule = (name: string, faults: { hook: string; count: number; sample: string }[]) => done(name, { ...shardResult({ clients: 10, msgs: 10, latenciesMs: [5, 6] }), targetModule: { file: '/srv/my-target.ts', faults } });

  it('faults of one shard are the fleet\'s: summed by hook, TARGET_MODULE_FAULT fatal on the merge', async () => {
    const fault = { hook: 'connect()', count: 3, sample: 'did not settle within 15000 ms' };
    const { merged, validity } = await mergeShards([withModule('s1', []), withModule('s2', [fault]), withModule('s3', [{ ...fault, count: 2, sample: 'other' }])]);
    expect(merged.targetModule).toEqual({ file: '/srv/my-target.ts', faults: [{ ...fault, count: 5 }] });
    const flag = validity.flags.find((f) => f.code === 'TARGET_MODULE_FAULT');
    expect(flag).toMatchObject({ severity: 'fatal' });
    expect(flag!.message).toContain('/srv/my-target.ts broke the target contract during the run (docs/targets.md): connect() x5 (first: did not settle within 15000 ms)');
    expect(validity.valid).toBe(false);
  });

  it('a file that behaved on every shard: the merged report says so, no flag', async () => {
    const { merged, validity } = await mergeShards([withModule('s1', []), withModule('s2', [])]);
    expect(merged.targetModule).toEqual({ file: '/srv/my-target.ts', faults: [] });
    expect(validity.flags.map((f) => f.code)).not.toContain('TARGET_MODULE_FAULT');
  });

  it('a shard\'s targetModule is screened before it adds up: a negative count makes the shard invalid', async () => {
    const { perShard, merged } = await mergeShards([withModule('s1', []), withModule('s2', [{ hook: 'connect()', count: -4, sample: 'x' }])]);
    expect(perShard.map((s) => s.status)).toEqual(['done', 'invalid']);
    expect(perShard[1]!.error).toContain('targetModule.faults[].count -4 is not an integer >= 0');
    expect(merged.clients).toBe(10);
  });
});
