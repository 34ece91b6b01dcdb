import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../lib/options.ts';
import { mergeLatency, summarize, type EncodedLatency } from '../../engine/measure/latency.ts';
import { decodeRanges } from '../../engine/measure/seq-ranges.ts';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { shiftLatency } from '../merge/latency-shift.ts';
import { api, startRunner, tempResultsDir, type RunnerProcess } from '../runner/testing.ts';
import { COORD_OPTIONS } from './options.ts';
import { runMultiShard } from './run.ts';

/**
 * --shared-stream over two real runner services (shards/runner/main.ts, port 0) and one real
 * target: s1 publishes, s2 only subscribes to the same stream. The merge must be the exact union:
 * s2's deliveries judged against s1's accepted set, counts added, histograms added after each
 * shard's clock offset is taken out.
 */
const TOKEN = 'shared-token';
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

const coord = (extra: Record<string, unknown>) =>
  parseOptions(COORD_OPTIONS, { values: { shards: runners.map((r) => r.url).join(','), token: TOKEN, target: 'ws', pollMs: 200, timeoutSec: 90, sharedStream: true, clockExchanges: 4, ...extra } });

describe('--shared-stream over two real runner shards', () => {
  it('jitter: s2 only subscribes; its deliveries are judged on s1\'s accepted set and the merge is the union', async () => {
    const lines: string[] = [];
    const r = await runMultiShard(coord({ test: 'jitter', perShardN: 6 }), { msgs: '30', interval: '50', jitter: '0', ramp: '100', settle: '1500', seed: '5' }, (l) => lines.push(l));
    expect(r.perShard.map((s) => s.status), JSON.stringify(r.perShard)).toEqual(['done', 'done']);
    const [pub, sub] = await Promise.all(r.perShard.map(async (s, i) => (await api(runners[i]!.url, `/jobs/${s.jobId}`, { token: TOKEN })).body));
    // One stream, one tag; only s1 published.
    expect(pub.params.stream).toBe(sub.params.stream);
    expect(sub.params).toMatchObject({ subscribeOnly: true, runId: pub.params.runId });
    expect(pub.result.role).toBe('publisher');
    expect(sub.result.role).toBe('subscriber');
    expect(pub.result.published).toBe(30);
    // The barrier: s1 was asked to publish once s2 listened.
    expect(lines.findIndex((l) => l.includes('subscribing shard(s) listening'))).toBeLessThan(lines.findIndex((l) => l.startsWith('[s1] job ')));

    const accepted = decodeRanges(pub.result.acceptedSeqs, 30)!;
    const acceptedCount = accepted.reduce((a: number, b: number) => a + b, 0);
    const arrivals: number[] = sub.result.arrivalsBySeq;
    expect(arrivals).toHaveLength(30);
    const subReceived = arrivals.reduce((a, b) => a + b, 0);
    const subAcceptedReceived = arrivals.reduce((a, n, k) => a + (accepted[k + 1] ? n : 0), 0);
    expect(r.merged.expectedDeliveries).toBe(pub.result.expectedDeliveries + 6 * acceptedCount);
    expect(r.merged.receivedDeliveries).toBe(pub.result.receivedDeliveries + subReceived);
    expect(r.merged.lostDeliveries).toBe(pub.result.lostDeliveries + (6 * acceptedCount - subAcceptedReceived));
    // Undisturbed clients on loopback: every accepted message reached all 12.
    expect(r.merged).toMatchObject({ clients: 12, expectedDeliveries: 360, receivedDeliveries: 360, lostDeliveries: 0, deliveryRatePct: 100, published: 30, publishedTotal: 30 });

    // Latency: each shard's histogram shifted by its offset from the publisher, then added.
    const off = new Map(r.clock!.offsets.map((o) => [o.name, o.offsetMs]));
    expect([...off.keys()]).toEqual(['s1', 's2']);
    const union = mergeLatency([pub.result.latencyHistogram as EncodedLatency, shiftLatency(sub.result.latencyHistogram, -(off.get('s2')! - off.get('s1')!) * 1000)]);
    expect(union.count).toBe(360);
    expect(r.merged.latencyRawMs).toEqual(summarize(union).latencyRawMs);
    expect(r.merged.latencyOverMinMs).toEqual(summarize(union).latencyOverMinMs);
    expect(r.perShard.map((s) => s.latency!.count)).toEqual([180, 180]);
    // On loopback a clock exchange's half round trip can exceed a sub-millisecond median: that is
    // the only fatal flag such a run may carry, and it is reported, not hidden. A shard's own
    // warnings (RUNNER_LOOP_LAG on a busy machine) are carried into the fleet's flags, named.
    expect(r.validity.flags.filter((f) => f.code !== 'CLOCK_UNCERTAINTY_EXCEEDS_LATENCY' && f.severity === 'fatal'), JSON.stringify(r.validity.flags)).toEqual([]);
    for (const f of r.validity.flags.filter((x) => x.severity === 'warning')) expect(f.shards?.length, JSON.stringify(f)).toBeGreaterThan(0);
    expect(r.exitCode).toBe(r.validity.valid ? 0 : 2);
  }, 120_000);

  it('a runner refuses subscribe-only without the shared stream and tag, and with several workers (400, the field named)', async () => {
    const post = (q: string) => api(runners[0]!.url, `/bench-jitter-ws?${q}`, { method: 'POST', token: TOKEN });
    for (const [q, option] of [['subscribeOnly=1&runId=x', 'stream'], ['subscribeOnly=1&stream=s', 'runId'], ['subscribeOnly=1&stream=s&runId=x&workers=2&clients=4', 'workers']] as const) {
      const r = await post(q);
      expect(r.status, q).toBe(400);
      expect(r.body).toMatchObject({ code: 'RR_ERR_OPTION_INVALID', details: { option } });
    }
  });

  it('refuses tests without a publisher and multi-worker shards before asking any shard', async () => {
    await expect(runMultiShard(coord({ test: 'idle' }), {}, () => {})).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID', message: expect.stringContaining('--shared-stream needs a test') });
    await expect(runMultiShard(coord({ test: 'jitter' }), { workers: '2' }, () => {})).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
  });
});
