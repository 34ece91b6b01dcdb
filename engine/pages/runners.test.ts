import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeShards } from '../../shards/merge/merge.ts';
import { done, shardResult, tailLatencies } from '../../shards/merge/fixtures.ts';
import type { MultiShardReport } from '../../shards/coordinator/run.ts';
import { withTarget } from '../measure/local-target.ts';
import { parseIdleOptions } from '../../runners/idle/options.ts';
import { runIdle } from '../../runners/idle/run.ts';
import { parseLatencyOptions } from '../../runners/latency/options.ts';
import { runLatency } from '../../runners/latency/run.ts';
import { getTarget } from '../targets/index.ts';
import { parseThroughputOptions } from '../../runners/throughput/options.ts';
import { runThroughput } from '../../runners/throughput/run.ts';
import { parseWhispersOptions } from '../../runners/whispers/options.ts';
import { runWhispers } from '../../runners/whispers/run.ts';
import { COORDINATOR_PAGES } from '../../shards/coordinator/page.ts';
import { RUNNER_MODULES } from '../../runners/modules.ts';
import { reportLine, reportModel, type ChartSpec, type ReportModel } from './index.ts';

/** Report builders fed by real small runs against real local targets (and the real merge). */
const charts = (m: ReportModel) => new Map(m.sections.flatMap((s) => s.charts).map((c) => [c.id, c]));
const points = (c: ChartSpec | undefined) => (c ? c.series.reduce((n, s) => n + s.values.filter((v) => v !== null).length, 0) : 0);
const meta = { command: 'npm run x' };
const pages = [...RUNNER_MODULES, ...COORDINATOR_PAGES];

describe('report builders over real runs', () => {
  it('idle: clients over time from the new per-second series, target memory/CPU, bytes per connection', async () => {
    const o = parseIdleOptions({ values: { target: 'ws', n: '40', hold: '2', ramp: '100', workers: '1' }, origin: 'test' });
    const r = await withTarget(getTarget('ws'), undefined, (url, svc) => runIdle(o, url, svc?.pid));
    expect(r.clientSeries!.length).toBeGreaterThanOrEqual(2);
    expect(r.clientSeries!.at(-1)!.slice(1)).toEqual([40, 40, 0, 40]);
    const m = reportModel(r, meta, pages);
    const c = charts(m);
    const clients = c.get('idle-clients')!;
    expect(clients.series.map((s) => s.label)).toEqual(expect.arrayContaining(['connected', 'subscribed']));
    const sub = clients.series.find((s) => s.label === 'subscribed')!.values.filter((v) => v !== null);
    expect(Math.max(...(sub as number[]))).toBe(40);
    expect(points(c.get('target-memory'))).toBeGreaterThan(0);
    expect(points(c.get('target-cpu'))).toBeGreaterThan(0);
    expect(c.get('idle-bytes-per-connection')!.series[0]!.values[1]).toBe(Math.round((r.targetMetrics.bytesPerConnection! / 1024) * 100) / 100);
    // Nothing failed: the chart is omitted, with the reason on the page.
    expect(c.has('idle-failures')).toBe(false);
    expect(m.sections[0]!.omitted).toContain('Failures by cause: no client failed.');
    expect(m.verdicts[0]!.level).toBe('good');
  });

  it('idle: failures by cause when nothing listens', async () => {
    const r = await runIdle(parseIdleOptions({ values: { target: 'ws', n: '6', hold: '0', ramp: '400', workers: '1' }, origin: 'test' }), 'http://127.0.0.1:1', undefined);
    const m = reportModel(r, meta, pages);
    const f = charts(m).get('idle-failures')!;
    expect(f.series.map((s) => [s.label, s.values.find((v) => v !== null)])).toEqual([['target', 6]]);
    expect(m.verdicts[0]!.level).toBe('lost');
    expect(m.flags!.map((x) => x.code)).toContain('NOTHING_CONNECTED');
  });

  it('latency, throughput, whispers: CDFs from their histograms and the delivery ledger', async () => {
    const lat = await withTarget(getTarget('ws'), undefined, (url) => runLatency(parseLatencyOptions({ values: { target: 'ws', n: '5', msgs: '20', interval: '30', settle: '1000', seed: '4' }, origin: 'test' }), url));
    const thr = await withTarget(getTarget('ws'), undefined, (url) => runThroughput(parseThroughputOptions({ values: { target: 'ws', n: '5', total: '20', interval: '10', drain: '1' }, origin: 'test' }), url));
    const wh = await withTarget(getTarget('replay'), undefined, (url) => runWhispers(parseWhispersOptions({ values: { target: 'replay', n: '9', rooms: '3', interval: '100', duration: '1', ramp: '200', settle: '2000' }, origin: 'test' }), url));
    for (const [r, expected] of [[lat, lat.receivedDeliveries], [thr, thr.receivedDeliveries], [wh, wh.receivedDeliveries]] as const) {
      expect(expected, r.test).toBeGreaterThan(0);
      const c = charts(reportModel(r, meta, pages));
      const raw = c.get('latency-cdf-raw')!;
      expect(raw.series[0]!.values.filter((v) => v !== null).at(-1), r.test).toBe(100);
      expect(raw.x.at(-1), r.test).toBeCloseTo(Math.max(0.1, r.latencyHistogram.maxUs / 1000), 2);
      expect(c.get('latency-cdf-min-normalised')!.x.at(-1), r.test).toBeCloseTo(Math.max(0.1, (r.latencyHistogram.maxUs - r.latencyHistogram.minUs) / 1000), 2);
      const ledger = c.get('delivery')!;
      expect(ledger.series.find((s) => s.label === 'received')!.values.find((v) => v !== null), r.test).toBe(expected);
    }
    // Every delivery runner's result carries its loss books, and its page shows them.
    for (const r of [lat, thr, wh]) {
      const books = r as unknown as { lossByCause?: Record<string, number>; lostDeliveries: number };
      expect(books.lossByCause, r.test).toBeDefined();
      expect(Object.values(books.lossByCause!).reduce((a, b) => a + b, 0), r.test).toBe(books.lostDeliveries);
      expect(reportModel(r, meta, pages).sections.map((s) => s.title), r.test).toContain('Lost by cause');
    }
    expect(charts(reportModel(lat, meta, pages)).has('connected-ws')).toBe(true);
    expect(points(charts(reportModel(thr, meta, pages)).get('throughput-rates'))).toBe(3);
  }, 60_000);

  it('multi-shard: per-shard bars, merged CDF, clock offsets when present; the CLI helper writes the page', async () => {
    const a = done('s1', shardResult({ clients: 10, msgs: 20, latenciesMs: tailLatencies(1, 200, 5) }));
    const b = { ...done('s2', shardResult({ clients: 10, msgs: 20, received: 150, latenciesMs: tailLatencies(2, 150, 40) })), clock: { offsetMs: 3.5, uncertaintyMs: 0.4, rttMs: 0.8, beforeMs: 3.4, afterMs: 3.6 } };
    const run = await mergeShards([a, b], { mode: 'own' });
    const report: MultiShardReport = { testType: 'jitter', target: 'replay', endpoint: '/bench-jitter-replay', mode: 'own-stream', shards: 2, perShardN: 10, startedAt: new Date().toISOString(), elapsedMs: 1, params: {}, meta: { shardUrls: [], publisher: null }, clock: { publisher: 's1', offsets: [{ name: 's2', offsetMs: 3.5, uncertaintyMs: 0.4, rttMs: 0.8 }], maxUncertaintyMs: 0.4 }, validity: run.validity, perShard: run.perShard, merged: run.merged, exitCode: 1, exitReason: '50 deliveries lost' };
    const m = reportModel({ ...report, test: 'multi-shard' } as { test: string }, meta, pages);
    const c = charts(m);
    expect(c.get('shard-counts')!.series.map((s) => s.values.find((v) => v !== null))).toEqual([200, 150]);
    expect(c.get('shard-p99')!.series.map((s) => s.values.find((v) => v !== null))).toEqual(run.perShard.map((s) => s.latency!.p99));
    expect(c.get('merged-latency-cdf-raw')!.series[0]!.values.filter((v) => v !== null).at(-1)).toBe(100);
    expect(c.get('clock-offsets')!.series[0]!.values.find((v) => v !== null)).toBe(3.5);
    expect(m.verdicts[0]!.level).toBe('lost');
    const dir = mkdtempSync(join(tmpdir(), 'rr-report-'));
    const line = await reportLine(join(dir, 'multi.json'), { ...report, clock: null, test: 'multi-shard' } as { test: string }, meta, pages);
    expect(line).toBe(`report: ${join(dir, 'multi.html')}\n`);
    const html = readFileSync(join(dir, 'multi.html'), 'utf8');
    expect(html).toContain('shard-counts');
    expect(html).not.toContain('clock-offsets');
    expect(html).toContain('own-stream mode, no clock exchange');
  });
});
