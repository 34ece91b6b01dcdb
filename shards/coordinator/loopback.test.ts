import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../lib/options.ts';
import { mergeLatency, summarize, type EncodedLatency } from '../../engine/measure/latency.ts';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { api, startRunner, tempResultsDir, type RunnerProcess } from '../runner/testing.ts';
import { COORD_OPTIONS } from './options.ts';
import { runMultiShard } from './run.ts';
import { formatReport } from './summary.ts';
import { main } from './cli.ts';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
    // What a capacity user came for: the target's bytes per connection over the fleet, runner
    // memory per client per shard, failure causes per shard and merged, the ceiling verdict.
    const results = await Promise.all(r.perShard.map(async (s, i) => (await api(runners[i]!.url, `/jobs/${s.jobId}`, { token: TOKEN })).body.result));
    const peaks = results.map((x) => x.targetMetrics.peakRssBytes as number);
    const bases = results.map((x) => x.targetMetrics.baselineRssBytes as number);
    expect(r.merged.targetBytesPerConnection, JSON.stringify(results.map((x) => x.targetMetrics))).toBe(Math.round((Math.max(...peaks) - Math.min(...bases)) / 40));
    expect(r.perShard.map((s) => s.targetBytesPerConnection)).toEqual(results.map((x) => x.targetMetrics.bytesPerConnection));
    expect(r.perShard.map((s) => s.runnerRssPerClientBytes)).toEqual(results.map((x) => x.runner.rssPerClientBytes));
    expect(r.perShard.map((s) => s.failureCauses)).toEqual(results.map((x) => x.failureCauses));
    expect(r.merged.failureCausesByShard).toEqual({ s1: results[0].failureCauses, s2: results[1].failureCauses });
    expect(r.merged).toHaveProperty('failureCauses');
    expect(r.merged.uniformShardCeiling).toBe(false);
    expect(typeof r.merged.runnerRssPerClientBytes).toBe('number');
    const table = formatReport(r);
    expect(table).toContain('target B/conn');
    expect(table).not.toContain('delivery%');
  });

  it('idle through the CLI: HOLD_SEC and RAMP_PER_SEC from the environment reach the shards; Reproduce names $BENCH_RUNNER_TOKEN', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-idle-cli-'));
    process.env.RESULTS_DIR = dir;
    let err = '';
    const ew = process.stderr.write.bind(process.stderr);
    const ow = process.stdout.write.bind(process.stdout);
    process.stderr.write = ((c: string) => ((err += c), true)) as typeof process.stderr.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    let code: number;
    try {
      code = await main(['--test', 'idle', '--target', 'ws', '--poll-ms', '200', '--workers', '1'], { SHARDS: runners.map((x) => x.url).join(','), BENCH_RUNNER_TOKEN: TOKEN, PER_SHARD_N: '10', HOLD_SEC: '1', RAMP_PER_SEC: '300' });
    } finally {
      process.stderr.write = ew;
      process.stdout.write = ow;
      delete process.env.RESULTS_DIR;
    }
    expect(code, err).toBe(0);
    const file = readdirSync(dir).find((f) => f.endsWith('.json'))!;
    const written = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    expect(written.params).toMatchObject({ hold: '1', ramp: '300' });
    const job = (await api(runners[0]!.url, `/jobs/${written.perShard[0].jobId}`, { token: TOKEN })).body;
    expect(job.params).toMatchObject({ hold: 1, ramp: 300, clients: 10 });
    // The Reproduce line is in the HTML report next to the JSON.
    const html = readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.html'))!), 'utf8');
    expect(html, err).toMatch(/BENCH_RUNNER_TOKEN=(&quot;|")\$BENCH_RUNNER_TOKEN(&quot;|") npm run bench:multi/);
    expect(html).not.toContain('&lt;redacted&gt;');
    expect(html).not.toContain('<redacted>');
  }, 60_000);

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
