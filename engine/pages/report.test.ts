import { describe, expect, it } from 'vitest';
import { JITTER_OPTIONS } from '../../runners/jitter/options.ts';
import { LatencyRecorder } from '../measure/latency.ts';
import { alignTables } from './charts/common.ts';
import { latencyCdfCharts } from './charts/latency.ts';
import { recoveryCdfChart } from './charts/recovery.ts';
import { eventMarkers } from './charts/timeline.ts';
import { capacityChart, commandLine, herdChart, htmlPathFor, renderPage, reportLine, renderReport, reportModel, resourceCharts, trendChart, trendReport } from './index.ts';
import { countPoints, downsampleChart } from './downsample.ts';
import type { ChartSpec } from './types.ts';
import { bannerFlags } from './validity.ts';
import { RUNNER_MODULES } from '../../runners/modules.ts';
import { verdicts } from './verdict.ts';

describe('report building blocks', () => {
  it('downsampling keeps the dip a reader must see and never touches the input', () => {
    const n = 10_000;
    const values = Array.from({ length: n }, (_, i) => (i === 7_777 ? 12.5 : 100));
    const spec: ChartSpec = { id: 'd', title: 't', note: 'n', xLabel: 'x', yLabel: 'y', x: values.map((_, i) => i), series: [{ label: 's', values, color: '#000', reduce: 'min' }] };
    const drawn = downsampleChart(spec, 500);
    expect(drawn.x.length).toBeLessThanOrEqual(500);
    expect(Math.min(...(drawn.series[0]!.values as number[]))).toBe(12.5);
    expect(spec.series[0]!.values).toHaveLength(n);
    expect(countPoints(drawn)).toBe(drawn.x.length);
    expect(downsampleChart(spec, n)).toBe(spec);
  });

  it('aligns tables with different x onto one axis with gaps', () => {
    expect(alignTables([{ x: [1, 3], y: [10, 30] }, { x: [2, 3], y: [20, 31] }])).toEqual({ x: [1, 2, 3], ys: [[10, null, 30], [null, 20, 31]] });
  });

  it('latency CDFs come from the histogram: raw and min-normalised end at 100% at the max', () => {
    const rec = new LatencyRecorder();
    for (let i = 1; i <= 1000; i++) rec.recordMs(50 + i);
    const [raw, norm] = latencyCdfCharts([{ label: 'a', latency: rec.encode() }, { label: 'empty', latency: new LatencyRecorder().encode() }]);
    expect(raw!.series).toHaveLength(1);
    expect(raw!.x.at(-1)).toBe(1050);
    expect(raw!.series[0]!.values.at(-1)).toBe(100);
    expect(norm!.x.at(-1)).toBe(999);
    expect(latencyCdfCharts([{ label: 'empty', latency: new LatencyRecorder().encode() }])).toEqual([]);
  });

  it('recovery CDF stops short of 100% when clients never came back', () => {
    const c = recoveryCdfChart([{ label: 'x', index: 0, kind: 'drop', recovered: 3, unrecovered: 1, quantilesMs: new Array(101).fill(2000) }]);
    expect(c!.x).toEqual([2]);
    expect(c!.series[0]!.values).toEqual([75]);
    expect(recoveryCdfChart([])).toBeNull();
  });

  it('marks group events as spans, counts client drops separately', () => {
    const { markers } = eventMarkers(
      [
        { kind: 'partition', scope: 'group', target: 1, atMs: 5000, durationMs: 2000, endedAtMs: 7100, applied: true },
        { kind: 'partition', scope: 'group', target: 0, atMs: 9000, durationMs: 2000, applied: false },
        { kind: 'drop', scope: 'client', target: 3, atMs: 6000, applied: true },
      ],
      12,
    );
    expect(markers).toEqual([
      { x: 0, label: 'publishing starts', color: expect.any(String) },
      { x: 5, x2: 7.1, label: 'partition g1', color: expect.any(String) },
      { x: 12, label: 'last message', color: expect.any(String) },
    ]);
  });

  it('verdicts: red for loss or clients never back, amber for much slower recovery, green otherwise', () => {
    const v = verdicts([
      { target: 'fast', lostDeliveries: 0, expectedDeliveries: 100, unrecovered: 0, recoveryP95Ms: 500 },
      { target: 'slow', lostDeliveries: 0, expectedDeliveries: 100, unrecovered: 0, recoveryP95Ms: 2500 },
      { target: 'lossy', lostDeliveries: 3, expectedDeliveries: 100, unrecovered: 0, recoveryP95Ms: 500 },
      { target: 'stuck', lostDeliveries: 0, expectedDeliveries: 100, unrecovered: 2, recoveryP95Ms: 600 },
      { target: 'bit-slower', lostDeliveries: 0, expectedDeliveries: 100, unrecovered: 0, recoveryP95Ms: 1200 },
    ]);
    expect(v.map((x) => x.level)).toEqual(['good', 'late', 'lost', 'lost', 'good']);
    expect(v[3]!.words).toBe('Clients never came back');
    // Alone, a target has nothing to be late against.
    expect(verdicts([{ target: 'slow', lostDeliveries: 0, expectedDeliveries: 1, unrecovered: 0, recoveryP95Ms: 9000 }])[0]).toMatchObject({ level: 'good', words: 'Nothing lost' });
  });

  it('validity flags in plain words; unknown codes fall back to the runner message', () => {
    const b = bannerFlags('ws', [
      { code: 'RUNNER_FD_LIMIT', severity: 'fatal', message: '3 clients...' },
      { code: 'SOMETHING_NEW' as never, severity: 'warning', message: 'new rule fired' },
    ]);
    expect(b[0]!.plain).toMatch(/runner ran out of file descriptors/);
    expect(b[1]!.plain).toBe('new rule fired');
  });

  it('the reproduce command lists non-default options and the seed, with secrets redacted', () => {
    const cmd = commandLine('bench:jitter', JITTER_OPTIONS, { ...Object.fromEntries(Object.entries(JITTER_OPTIONS).map(([k, s]) => [k, s.default])), target: 'ws', clients: 20, plan: 'drop+flaky', broadcastKey: 's3cret', seed: 99 });
    expect(cmd).toBe('npm run bench:jitter -- --target ws --clients 20 --broadcast-key <redacted> --plan drop+flaky --seed 99');
  });

  it('writes the HTML under the JSON name (the runner service serves <id>.html)', () => {
    expect(htmlPathFor('/r/bench-drop-2026.json')).toBe('/r/bench-drop-2026.html');
  });

  it('a report that cannot be written is reported, not thrown: the run\'s results are already on disk', async () => {
    expect(await reportLine('/nonexistent-dir/x.json', { test: 'jitter' }, { command: '' }, RUNNER_MODULES)).toMatch(/^report: not written \(/);
    expect(() => renderReport({ test: 'nope' }, { command: '' }, RUNNER_MODULES)).toThrow(/no report builder for results of test "nope"/);
  });

  it('takes the page builder from the caller\'s list by the result\'s test, never from a list of its own', () => {
    const model = { title: 'x', subtitle: '', command: 'c', seed: null, generatedAt: '', flags: [], verdicts: [], summary: [], sections: [] };
    expect(reportModel({ test: 'custom' }, { command: 'c' }, [{ name: 'other' }, { name: 'custom', page: () => model }])).toBe(model);
    expect(() => reportModel({ test: 'jitter' }, { command: '' }, [])).toThrow(/no report builder for results of test "jitter"/);
    // A module without a page is in the list but builds nothing.
    expect(() => reportModel({ test: 'sick-redis' }, { command: '' }, RUNNER_MODULES)).toThrow(/no report builder for results of test "sick-redis"/);
    expect(RUNNER_MODULES.filter((m) => m.page).map((m) => m.name).sort()).toEqual(['avalanche', 'capacity', 'deploy-impact', 'idle', 'jitter', 'latency', 'throughput', 'whispers']);
  });

  it('the page inlines uPlot, allows no network and cannot be broken out of by a label', () => {
    const evil = '</script><script>window.pwned=1</script>';
    const model = trendReport(evil, [{ metric: evil, unit: 'ms', runs: [{ label: 'a', value: 1 }] }], { command: 'x' });
    const html = renderPage(model);
    expect(html).not.toContain('<script>window.pwned');
    expect(html).toContain("default-src 'none'");
    expect(html).toMatch(/uPlot/);
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/cdn/i);
  });

  it('future runners\' charts: null or empty without data, specs with data', () => {
    expect(herdChart([])).toBeNull();
    expect(capacityChart([])).toBeNull();
    expect(resourceCharts([])).toEqual([]);
    expect(trendChart({ metric: 'm', unit: 'ms', runs: [] })).toBeNull();
    const cap = capacityChart([{ label: 't', metric: 'p99', unit: 'ms', budget: 100, steps: [{ clients: 10, value: 50 }, { clients: 20, value: 150 }] }])!;
    expect(cap.hlines).toEqual([{ y: 100, label: 'budget 100 ms', color: expect.any(String) }]);
    const herd = herdChart([{ label: 't', clients: 4, tMs: [0, 1000, 2000], reconnected: [0, 2, 4] }])!;
    expect(herd.series[0]!.values).toEqual([0, 50, 100]);
    const trend = trendChart({ metric: 'p99', unit: 'ms', runs: [{ label: 'a', value: 1, baseline: 1 }, { label: 'b', value: 3, baseline: 1, verdict: 'drift' }] })!;
    expect(trend.series.map((s) => s.label)).toEqual(['p99', 'baseline']);
    expect(trend.markers).toHaveLength(1);
  });
});
