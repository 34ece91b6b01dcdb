import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../lib/options.ts';
import { mergeLatency, summarize, type EncodedLatency } from '../../runners/core/latency.ts';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { api, startRunner, tempResultsDir, type RunnerProcess } from '../runner/testing.ts';
import { COORD_OPTIONS } from './options.ts';
import { runMultiShard } from './run.ts';

/**
 * Two real runner services (shards/runner/main.ts, each its own process on port 0) against one
 * real ws server on loopback, driven by the coordinator: the merged result must be the exact
 * union of what each shard reported.
 */
const TOKEN = 'loopback-token';
let target: ServiceHandle;
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  target = await startService('ws');
  for (let i = 0; i < 2; i++) runners.push(await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_WS_URL: target.httpUrl }));
}, 60_000);
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await target?.stop();
});

const coord = (extra: Record<string, unknown>) => parseOptions(COORD_OPTIONS, { values: { shards: runners.map((r) => r.url).join(','), token: TOKEN, target: 'ws', pollMs: 200, timeoutSec: 60, ...extra } });

describe('coordinator over two real runner shards', () => {
  it('jitter: counts add up and the merged latency is the union of the shards\' histograms', async () => {
    const lines: string[] = [];
    const r = await runMultiShard(coord({ test: 'jitter', perShardN: 6 }), { msgs: '30', interval: '50', jitter: '0', ramp: '100', settle: '1000', seed: '5' }, (l) => lines.push(l));
    expect(r.perShard.map((s) => s.status), JSON.stringify(r.perShard)).toEqual(['done', 'done']);
    // Each shard's own result, fetched from the shard itself.
    const results = await Promise.all(r.perShard.map(async (s, i) => (await api(runners[i]!.url, `/jobs/${s.jobId}`, { token: TOKEN })).body.result));
    expect(r.merged.clients).toBe(12);
    expect(r.merged.expectedDeliveries).toBe(results[0].expectedDeliveries + results[1].expectedDeliveries);
    expect(r.merged.receivedDeliveries).toBe(results[0].receivedDeliveries + results[1].receivedDeliveries);
    expect(r.merged.receivedDeliveries).toBe(360);
    const union = mergeLatency(results.map((x) => x.latencyHistogram as EncodedLatency));
    expect(union.count).toBe(360);
    expect(r.merged.latencyRawMs).toEqual(summarize(union).latencyRawMs);
    expect(r.merged.latencyOverMinMs).toEqual(summarize(union).latencyOverMinMs);
    expect((r.merged.latencyHistogram as EncodedLatency).count).toBe(360);
    // Each shard's own figures stay visible next to the union.
    expect(r.perShard.map((s) => s.latency!.count)).toEqual([180, 180]);
    expect(r.perShard[0]!.latency).toEqual(summarize(results[0].latencyHistogram).latencyRawMs);
    // Own streams: every shard published its own 30 messages.
    expect(r.merged).toMatchObject({ published: 30, publishedTotal: 60, lostDeliveries: 0, deliveryRatePct: 100 });
    expect(r.validity.valid).toBe(true);
    expect(r.exitCode).toBe(0);
    expect(lines.some((l) => l.startsWith('[s1] ') && l.includes('enqueued'))).toBe(true);
    expect(lines.some((l) => l.startsWith('[s2] ') && l.includes('done'))).toBe(true);
  });

  it('idle: subscribed connections add up over the shards on one target', async () => {
    const r = await runMultiShard(coord({ test: 'idle', perShardN: 20 }), { hold: '1', ramp: '200', workers: '1' }, () => {});
    expect(r.perShard.map((s) => s.status), JSON.stringify(r.perShard)).toEqual(['done', 'done']);
    expect(r.merged).toMatchObject({ clients: 40, subscribed: 40, failed: 0 });
    expect(r.perShard.map((s) => s.connected)).toEqual([20, 20]);
    expect(r.validity.flags.map((f) => f.code)).not.toContain('UNIFORM_SHARD_CEILING');
    expect(r.exitCode).toBe(0);
  });

  it('a real shard killed mid-run is reported as such and its clients are not counted as loss', async () => {
    const doomed = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_WS_URL: target.httpUrl });
    const o = parseOptions(COORD_OPTIONS, { values: { shards: `${runners[0]!.url},${doomed.url}`, token: TOKEN, target: 'ws', test: 'jitter', perShardN: 6, pollMs: 200, timeoutSec: 12 } });
    const run = runMultiShard(o, { msgs: '30', interval: '50', jitter: '0', ramp: '100', settle: '1000', seed: '6' }, (l) => {
      if (l.startsWith('[s2] job ')) void doomed.stop('SIGKILL');
    });
    const r = await run;
    await doomed.stop('SIGKILL');
    expect(r.perShard.map((s) => s.status)).toEqual(['done', 'timeout']);
    expect(r.perShard[1]!.error).toMatch(/no final status within 12 s \(last poll: ECONNREFUSED\)/);
    // Only s1's six clients are in the figures: s2's are neither expected nor lost.
    expect(r.merged).toMatchObject({ clients: 6, expectedDeliveries: 180, lostDeliveries: 0, deliveryRatePct: 100 });
    expect(r.validity.flags.find((f) => f.code === 'SHARD_FAILED')).toMatchObject({ severity: 'warning', shards: ['s2'] });
    expect(r.exitCode).toBe(1);
    expect(r.exitReason).toBe('failed shards: s2 (timeout)');
  }, 60_000);

  it('a shard asked for a param its table rejects fails clearly on every shard, nothing runs', async () => {
    const r = await runMultiShard(coord({ test: 'jitter' }), { plan: 'no-such-plan', seed: '1' }, () => {});
    expect(r.perShard.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(r.perShard[0]!.error).toMatch(/answered 400: RR_ERR_OPTION_INVALID/);
    expect(r.exitCode).toBe(2);
  });
});
