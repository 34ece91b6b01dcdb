import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeHistoryReport } from '../../shards/manifest/history-page.ts';
import type { RunRecord } from '../../shards/manifest/store.ts';
import type { MetricVerdict } from '../../shards/manifest/verdict.ts';
import { CHROMIUM, chartProblems, openBrowser, openReport, type ChartState } from './browser-harness.ts';
import { eventMarkers } from './charts/timeline.ts';
import { renderPage } from './index.ts';
import type { ReportModel } from './types.ts';

/**
 * What the charts print, read back from Chromium: the y tick labels as drawn, every marker label's
 * box on the plot, and whether the y axis is wide enough for its widest tick label.
 */
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`SKIPPED label browser tests: ${CHROMIUM} not found`);

const overlaps = (a: readonly number[], b: readonly number[]) => a[0]! < b[0]! + b[2]! && b[0]! < a[0]! + a[2]! && a[1]! < b[1]! + b[3]! && b[1]! < a[1]! + a[3]!;
function labelProblems(c: ChartState): string[] {
  const out: string[] = [];
  const boxes = c.labelBoxes ?? [];
  boxes.forEach((b, i) => {
    if (b[0] < 0 || b[0] + b[2] > c.plotWidth! + 0.5) out.push(`${c.id}: label ${i} at x ${b[0]}..${b[0] + b[2]} leaves the ${c.plotWidth} px plot`);
    for (let j = 0; j < i; j++) if (overlaps(b, boxes[j]!)) out.push(`${c.id}: labels ${j} and ${i} overlap`);
  });
  if (c.yAxisFit && c.yAxisFit.size < c.yAxisFit.need) out.push(`${c.id}: y axis ${c.yAxisFit.size} px, its tick labels need ${c.yAxisFit.need} px`);
  return out;
}

const metric = (path: string, measured: number, baseline: number, verdict: MetricVerdict['verdict'] = 'ok'): MetricVerdict => ({ path, direction: 'higher', baseline, measured, delta: measured - baseline, deltaPct: 0, verdict, reason: '' });
const record = (id: string, runId: string, metrics: MetricVerdict[]): RunRecord => ({ id, runId, runAt: runId, commit: 'abcdef1234', where: 'local', runner: 'jitter', target: 'replay', params: {}, repeat: 1, valid: true, verdict: 'ok', errors: [], metrics, executions: [] });

describe.skipIf(!hasChromium)('chart labels in Chromium', () => {
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  beforeAll(async () => {
    browser = await openBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('history.html: a flat metric gets distinct y ticks, big values fit their axis, a single run is not "run 1 the oldest, run 1 the newest"', { timeout: 60_000 }, async () => {
    // A mean over 6 clients held at 88.1666..., against a baseline stored rounded: the spread is
    // below the tick labels' precision (every tick read "88.167").
    const runs = ['2026-11-28T01-00-00', '2026-11-29T01-00-00', '2026-11-30T01-00-00'];
    const history = runs.map((runId, i) => ({
      runId,
      records: new Map([
        ['replay-history-long-test-id', record('replay-history-long-test-id', runId, [metric('deliveryRatePct', 88.16666666666667, 88.167, i === 2 ? 'drift' : 'ok'), metric('receivedDeliveries', 1_234_567 + i * 3, 1_234_560)])],
        ...(i === 2 ? [['only-once', record('only-once', runId, [metric('deliveryRatePct', 99.5, 99.5)])] as const] : []),
      ]),
    }));
    const dir = mkdtempSync(join(tmpdir(), 'rebound-history-'));
    const file = await writeHistoryReport(dir, history, { last: 10, filter: '' }, { command: 'npm run bench:rebaseline:history -- --html' });
    const r = await openReport(browser.context, file, 'report-history-labels.png');
    expect(chartProblems(r, file, 500)).toEqual([]);
    const flat = r.charts.find((c) => c.id === 'trend-replay-history-long-test-id-deliveryratepct')!;
    expect(flat.yTickLabels!.length).toBeGreaterThan(1);
    expect(new Set(flat.yTickLabels).size, JSON.stringify(flat.yTickLabels)).toBe(flat.yTickLabels!.length);
    for (const c of r.charts) expect(labelProblems(c)).toEqual([]);
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('One run so far (2026-11-30T01-00-00 abcdef1).');
    expect(html).not.toMatch(/run 1 the newest/);
    expect(html).toContain('Run 1 is the oldest (2026-11-28T01-00-00 abcdef1), run 3 the newest (2026-11-30T01-00-00 abcdef1).');
  });

  it('chaos timelines: crowded partition spans (six groups within a second) keep their labels apart and on the plot', { timeout: 60_000 }, async () => {
    const events = Array.from({ length: 6 }, (_, g) => ({ kind: 'partition', scope: 'group', target: g, atMs: 5000 + g * 180, durationMs: 2000, applied: true }));
    const { markers } = eventMarkers(events, 9.6);
    const x = Array.from({ length: 10 }, (_, i) => i + 1);
    const model: ReportModel = {
      title: 'partition spans',
      subtitle: '',
      command: 'test',
      seed: null,
      generatedAt: new Date().toISOString(),
      flags: null,
      verdicts: [],
      summary: [],
      sections: [{ title: 'Timeline', charts: [{ id: 'connected-crowded', title: 'Connected', note: 'n', xLabel: 's', yLabel: 'clients', x, series: [{ label: 'connected', values: x.map((t) => (t >= 5 && t < 8 ? 40 : 60)), color: '#0072B2', reduce: 'min' }], markers }] }],
    };
    const file = join(mkdtempSync(join(tmpdir(), 'rebound-spans-')), 'spans.html');
    writeFileSync(file, renderPage(model));
    const r = await openReport(browser.context, file, 'report-partition-labels.png');
    expect(chartProblems(r, file, 500)).toEqual([]);
    const c = r.charts[0]!;
    expect(c.labelBoxes).toHaveLength(8); // publishing starts, six partitions, last message
    expect(labelProblems(c)).toEqual([]);
  });
});
