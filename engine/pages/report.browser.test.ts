import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkValidity } from '../measure/validity.ts';
import type { JitterResult } from '../../runners/jitter/result.ts';
import { CHROMIUM, chartProblems, openBrowser, openReport, type OpenedReport } from './browser-harness.ts';
import { capacityChart, herdChart, renderPage, resourceCharts, trendReport, writeReport, type HerdInput } from './index.ts';
import { jitterModule } from '../../runners/jitter/module.ts';

/**
 * Reports from real small runs of the main job (`npm run bench`, drop plan) and of a chaos plan
 * (partition through the embedded proxy), opened in Debian's Chromium: every chart drew data on
 * labelled axes, the page made no request beyond its own file, the validity banner shows a
 * fatal flag when a result has one. Screenshots go to test-artifacts/.
 */
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`SKIPPED report browser tests: ${CHROMIUM} not found (apt-get install -y chromium; .ci/run does this)`);

const SMALL = ['--targets', 'ws,socketio-csr', '--tuned', 'false', '--clients', '20', '--msgs', '12', '--interval', '600', '--jitter', '1', '--jitter-ms', '500', '--ramp', '200'];

function bench(args: string[]): Promise<{ json: string; html: string; results: JitterResult[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'rebound-report-'));
  return new Promise((resolve, reject) => {
    execFile('node', ['--import', 'tsx', 'cli/bench.ts', ...args], { env: { ...process.env, RESULTS_DIR: dir }, timeout: 150_000 }, (err, _stdout, stderr) => {
      const json = /results: (\S+\.json)/.exec(stderr)?.[1];
      const html = /report: (\S+\.html)/.exec(stderr)?.[1];
      // Exit code 2 = a validity flag fired (e.g. runner loop lag on a busy machine): the report is still written.
      if (!json || !html || (err && (err as { code?: number }).code !== 2)) return reject(new Error(`bench failed: ${err?.message}\n${stderr.slice(-2000)}`));
      resolve({ json, html, results: JSON.parse(readFileSync(json, 'utf8')) as JitterResult[] });
    });
  });
}

function expectChartsDrawn(r: OpenedReport, htmlPath: string) {
  expect(chartProblems(r, htmlPath, 1000)).toEqual([]);
  console.log(`report screenshot: ${r.screenshot}`);
}

describe.skipIf(!hasChromium)('visual report in Chromium', () => {
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  const runs = hasChromium ? Promise.all([bench([...SMALL, '--settle', '4000', '--seed', '42']), bench([...SMALL, '--plan', 'partition', '--groups', '2', '--chaos-ms', '2000', '--settle', '5000', '--seed', '7'])]) : Promise.resolve([]);
  // Don't leave a rejected promise unobserved while beforeAll waits for the browser.
  runs.catch(() => {});

  beforeAll(async () => {
    browser = await openBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('main job: one comparison page next to the JSON, every chart drawn, no network, loss and lateness told apart', { timeout: 200_000 }, async () => {
    const [drop] = await runs;
    expect(drop!.html).toBe(drop!.json.replace(/\.json$/, '.html'));
    expect(statSync(drop!.html).size).toBeLessThan(2 * 1024 * 1024);
    const r = await openReport(browser.context, drop!.html, 'report-bench-drop.png');
    expectChartsDrawn(r, drop!.html);
    const ids = r.charts.map((c) => c.id);
    for (const id of ['compare-delivered', 'compare-connected', 'recovery-cdf', 'recovery-delivery', 'recovery-latency', 'latency-cdf-raw', 'latency-cdf-min-normalised', 'target-memory', 'target-cpu', 'connected-ws', 'deliveries-ws', 'connected-socketio-csr', 'deliveries-socketio-csr']) expect(ids).toContain(id);
    // Both targets side by side on the comparison charts.
    expect(r.charts.find((c) => c.id === 'compare-delivered')!.series).toBe(2);
    // ws is at-most-once: it lost messages; CSR replays: it did not.
    const [ws, csr] = drop!.results;
    expect(ws!.lostDeliveries).toBeGreaterThan(0);
    expect(r.verdicts).toContainEqual({ target: 'ws', level: 'lost' });
    expect(csr!.lostDeliveries).toBe(0);
    expect(r.verdicts.find((v) => v.target === 'socketio-csr')!.level).not.toBe('lost');
    // The banner tells the truth about the real run.
    expect(r.banner.some((b) => b.severity === 'fatal')).toBe(!drop!.results.every((x) => x.validity.valid));
    const html = readFileSync(drop!.html, 'utf8');
    expect(html).toContain('npm run bench -- ');
    expect(html).toContain('--seed 42');
  });

  it('chaos plan: partitions are marked on the timelines and the recovery charts draw', { timeout: 200_000 }, async () => {
    const [, part] = await runs;
    const r = await openReport(browser.context, part!.html, 'report-bench-partition.png');
    expectChartsDrawn(r, part!.html);
    const connected = r.charts.filter((c) => c.id.startsWith('connected-'));
    expect(connected).toHaveLength(2);
    const partitions = part!.results[0]!.chaos.timeline.filter((e) => e.applied).length;
    expect(partitions).toBeGreaterThan(0);
    // "publishing starts", "last message" and one span per applied partition.
    for (const c of connected) expect(c.markers).toBeGreaterThanOrEqual(partitions + 1);
    // Every span's label drawn on the plot, none over another.
    for (const c of connected) {
      const boxes = c.labelBoxes!;
      expect(boxes.length).toBe(c.markers);
      for (const [i, b] of boxes.entries()) {
        expect(b[0]).toBeGreaterThanOrEqual(0);
        expect(b[0] + b[2]).toBeLessThanOrEqual(c.plotWidth! + 0.5);
        for (const o of boxes.slice(0, i)) expect(b[0] < o[0] + o[2] && o[0] < b[0] + b[2] && b[1] < o[1] + o[3] && o[1] < b[1] + b[3], `${c.id}: labels overlap`).toBe(false);
      }
    }
    expect(readFileSync(part!.html, 'utf8')).toContain('--plan partition');
  });

  it('the validity banner shows a fatal flag in plain words', { timeout: 200_000 }, async () => {
    const [drop] = await runs;
    // A real result that overran its plan tenfold: the real validity rule fires.
    const overran = drop!.results.map((x, i) => (i === 0 ? { ...x, elapsedMs: x.plannedMs * 10 } : x));
    overran[0] = { ...overran[0]!, validity: checkValidity(overran[0]!) };
    expect(overran[0]!.validity.valid).toBe(false);
    const json = drop!.json.replace(/\.json$/, '-overran.json');
    writeFileSync(json, JSON.stringify(overran));
    const html = await writeReport(json, overran, { command: 'npm run bench -- --seed 42' }, [jitterModule]);
    const r = await openReport(browser.context, html, 'report-fatal-banner.png');
    const fatal = r.banner.find((b) => b.severity === 'fatal');
    expect(fatal?.flags).toContain('OVERRAN_PLAN');
    expect(readFileSync(html, 'utf8')).toContain('Not valid: do not quote these numbers.');
  });

  it('herd, capacity, target resources and trend charts render from their documented input shapes', { timeout: 200_000 }, async () => {
    const [, part] = await runs;
    // Herd from the real partition run: a partition is a mass disconnect of one proxy group.
    const herds: HerdInput[] = part!.results.map((res) => {
      const s = res.series!;
      const ev = res.chaos.timeline.find((e) => e.applied)!;
      const from = Math.floor((ev.atMs - s.startMs) / s.bucketMs);
      const window = s.connectedMin.slice(from);
      const low = Math.min(...window);
      const lost = Math.max(1, s.connected[Math.max(0, from - 1)]! - low);
      return { label: res.target, clients: lost, tMs: window.map((_, k) => k * s.bucketMs), reconnected: window.map((n) => Math.min(lost, n - low)), serverUpAtMs: (ev.endedAtMs ?? ev.atMs) - ev.atMs };
    });
    // Capacity and resources: sample shapes (those runners land later; see docs/reports.md).
    const capacity = capacityChart([
      { label: 'replay', metric: 'p99 latency', unit: 'ms', budget: 250, steps: [1000, 2000, 4000, 8000].map((clients, i) => ({ clients, value: [40, 70, 160, 420][i]! })) },
      { label: 'socketio', metric: 'p99 latency', unit: 'ms', budget: 250, steps: [1000, 2000, 4000].map((clients, i) => ({ clients, value: [60, 180, 900][i]! })) },
    ]);
    const resources = resourceCharts([{ label: 'ws', tSec: [0, 1, 2, 3, 4], rssMb: [60, 62, 75, 74, 74], cpuPct: [3, 12, 80, 20, 5] }]);
    const trend = trendReport('Rebaseline history', [{ metric: 'replay p99', unit: 'ms', runs: [{ label: 'a1', value: 120, baseline: 118 }, { label: 'b2', value: 125, baseline: 118 }, { label: 'c3', value: 190, baseline: 118, verdict: 'regress' }] }], { command: 'npm run bench:rebaseline:history -- --html' });
    const model = { ...trend, title: 'Future runners', sections: [...trend.sections, { title: 'Later runners', charts: [herdChart(herds)!, capacity!, ...resources] }] };
    const dir = mkdtempSync(join(tmpdir(), 'rebound-report-'));
    const html = join(dir, 'future.html');
    writeFileSync(html, renderPage(model));
    const r = await openReport(browser.context, html, 'report-future-charts.png');
    expectChartsDrawn(r, html);
    expect(r.charts.map((c) => c.id)).toEqual(['trend-replay-p99', 'herd', 'capacity', 'target-memory', 'target-cpu']);
    expect(r.charts.find((c) => c.id === 'capacity')!.markers).toBe(1); // the budget line
    expect(r.charts.find((c) => c.id === 'trend-replay-p99')!.markers).toBe(1); // the regression
  });
});
