/**
 * Report size and render time at the brief's scale: the main job's comparison report for
 * 4 targets x 10,000 clients x 120 messages (the benchmark's 10K run), and a one-hour soak-sized
 * single-target report (3,600 one-second buckets, to exercise downsampling), against a small
 * 20-client report as the side-by-side reference. Results are synthetic (runners/jitter/synthetic.ts:
 * the engine's own recorders fed with a simulated run on the seeded drop plan): this measures
 * the report, not a target.
 *
 *   npx tsx bench/report-render.ts [--clients 10000] [--msgs 120] [--targets 4] [--repeats 5] [--out docs/results/report-render.json]
 *
 * Prints one JSON summary on stdout (and writes it to --out). Goals: HTML < 2 MB, in-browser
 * render < 1 s (from navigation start to every chart drawn, headless Chromium).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCliOptions } from '../lib/cli.ts';
import type { JitterResult } from '../runners/jitter/result.ts';
import { CHROMIUM, openBrowser } from '../engine/pages/browser-harness.ts';
import { renderReport } from '../engine/pages/index.ts';
import { jitterModule } from '../runners/jitter/module.ts';
import { syntheticJitterResult } from '../runners/jitter/synthetic.ts';
import { pathToFileURL } from 'node:url';

const o = parseCliOptions({
  clients: { type: 'int', default: 10_000, min: 1, max: 18_000, doc: 'clients per target' },
  msgs: { type: 'int', default: 120, min: 1, max: 10_000, doc: 'messages per run (every 500 ms)' },
  targets: { type: 'int', default: 4, min: 1, max: 8, doc: 'targets side by side' },
  repeats: { type: 'int', default: 5, min: 1, max: 50, doc: 'browser opens per report (median reported)' },
  out: { type: 'string', default: '', doc: 'also write the JSON summary here' },
});

const NAMES = ['socketio', 'socketio-csr', 'ws', 'replay', 't5', 't6', 't7', 't8'];
const results = (clients: number, msgs: number, intervalMs: number, targets: number): JitterResult[] =>
  Array.from({ length: targets }, (_, i) => syntheticJitterResult({ target: NAMES[i]!, clients, msgs, intervalMs, jitterSec: 15, offlineMs: i % 2 ? 1000 : 2000, replays: i % 2 === 1, seed: 20261130 }));

const dir = mkdtempSync(join(tmpdir(), 'rebound-report-bench-'));
const cases = [
  { name: 'small-2x20', results: results(20, 12, 600, 2) },
  { name: `main-job-${o.targets}x${o.clients}`, results: results(o.clients, o.msgs, 500, o.targets) },
  // One hour of publishing at 1/s: 3,600+ buckets per series.
  { name: 'soak-1h-1x1000', results: results(1000, 3600, 1000, 1) },
];

const browser = await openBrowser();
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const rows = [];
try {
  for (const c of cases) {
    const file = join(dir, `${c.name}.html`);
    const t = performance.now();
    const html = renderReport(c.results, { command: 'npx tsx bench/report-render.ts' }, [jitterModule]);
    const generateMs = performance.now() - t;
    writeFileSync(file, html);
    const loads: number[] = [];
    const scripts: number[] = [];
    let charts = 0;
    for (let r = 0; r < o.repeats; r++) {
      const page = await browser.context.newPage();
      await page.goto(pathToFileURL(file).href);
      await page.waitForSelector('body[data-rendered="true"]', { timeout: 60_000 });
      // Navigation start to the task after every chart's first draw.
      const m = await page.evaluate(() => ({ at: performance.now(), script: Number(document.body.dataset.renderMs), charts: Number(document.body.dataset.charts) }));
      loads.push(m.at);
      scripts.push(m.script);
      charts = m.charts;
      await page.close();
    }
    rows.push({ case: c.name, clients: c.results[0]!.clients, targets: c.results.length, timelineEvents: c.results.reduce((n, r) => n + r.chaos.timeline.length, 0), resultJsonBytes: JSON.stringify(c.results).length, htmlBytes: statSync(file).size, generateMs: Math.round(generateMs), charts, renderMsMedian: Math.round(median(loads)), chartScriptMsMedian: Math.round(median(scripts)), renderMsMax: Math.round(Math.max(...loads)) });
    process.stderr.write(`${c.name}: ${rows.at(-1)!.htmlBytes} bytes, render ${rows.at(-1)!.renderMsMedian} ms\n`);
  }
} finally {
  await browser.close();
}
const summary = {
  bench: 'report-render',
  date: new Date().toISOString(),
  commit: (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      return null;
    }
  })(),
  chromium: CHROMIUM,
  node: process.version,
  loadavg1: Math.round(loadavg()[0]! * 100) / 100,
  goals: { htmlBytesMax: 2 * 1024 * 1024, renderMsMax: 1000 },
  rows,
  met: rows.every((r) => r.htmlBytes < 2 * 1024 * 1024 && r.renderMsMedian < 1000),
};
const text = JSON.stringify(summary, null, 2) + '\n';
if (o.out) writeFileSync(o.out, text);
process.stdout.write(text);
