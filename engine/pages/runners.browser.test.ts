import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { startRunner, tempResultsDir, type RunnerProcess } from '../../shards/runner/testing.ts';
import { combineClock, measureOffset } from '../../shards/coordinator/clock.ts';
import type { MultiShardReport } from '../../shards/coordinator/run.ts';
import { CHROMIUM, chartProblems, openBrowser, openReport, type OpenedReport } from './browser-harness.ts';
import { writeReport } from './index.ts';
import { COORDINATOR_PAGES } from '../../shards/coordinator/page.ts';

const pick = (c: { offsetMs: number; uncertaintyMs: number; rttMs: number }) => ({ offsetMs: c.offsetMs, uncertaintyMs: c.uncertaintyMs, rttMs: c.rttMs });

/**
 * The idle and multi-shard reports as their CLIs write them after small real runs (the idle
 * runner on a local ws server; the coordinator over two real runner services), opened in
 * Debian's Chromium: every chart drew data on labelled axes, no request beyond the file itself.
 */
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`SKIPPED runner report browser tests: ${CHROMIUM} not found`);

function cli(script: string, args: string[], env: Record<string, string>): Promise<{ json: string; html: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'rebound-report-'));
  return new Promise((resolve, reject) => {
    execFile('node', ['--import', 'tsx', script, ...args], { env: { ...process.env, RESULTS_DIR: dir, ...env }, timeout: 120_000 }, (err, _stdout, stderr) => {
      const json = /^results: (\S+\.json)$/m.exec(stderr)?.[1];
      const html = /^report: (\S+\.html)$/m.exec(stderr)?.[1];
      // Exit 2 = a validity flag fired (runner loop lag on a busy machine): the report is still written.
      if (!json || !html || (err && (err as { code?: number }).code !== 2)) return reject(new Error(`${script} failed: ${err?.message}\n${stderr.slice(-2000)}`));
      resolve({ json, html, stderr });
    });
  });
}

function expectChartsDrawn(r: OpenedReport, htmlPath: string) {
  expect(chartProblems(r, htmlPath, 500)).toEqual([]);
  console.log(`report screenshot: ${r.screenshot}`);
}

describe.skipIf(!hasChromium)('idle and multi-shard reports in Chromium', () => {
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  let target: ServiceHandle;
  const runners: RunnerProcess[] = [];
  const TOKEN = 'report-browser-token';

  beforeAll(async () => {
    browser = await openBrowser();
    target = await startService('ws');
    for (let i = 0; i < 2; i++) runners.push(await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_WS_URL: target.httpUrl }));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
    await target?.stop();
    await browser?.close();
  });

  it('idle: clients over time, target memory and CPU, bytes per connection', { timeout: 150_000 }, async () => {
    const run = await cli('cli/idle.ts', ['--target', 'ws', '--n', '40', '--hold', '2', '--ramp', '100', '--workers', '1'], {});
    expect(run.html).toBe(run.json.replace(/\.json$/, '.html'));
    const r = await openReport(browser.context, run.html, 'report-idle.png');
    expectChartsDrawn(r, run.html);
    expect(r.charts.map((c) => c.id)).toEqual(['idle-clients', 'target-memory', 'target-cpu', 'idle-bytes-per-connection']);
    expect(r.verdicts).toEqual([{ target: 'ws', level: 'good' }]);
    expect(readFileSync(run.html, 'utf8')).toContain('npm run bench:idle -- ');
  });

  it('multi-shard: per-shard bars and the merged CDF; clock offsets when the run has them', { timeout: 150_000 }, async () => {
    const args = ['--test', 'jitter', '--target', 'ws', '--per-shard-n', '5', '--poll-ms', '200', '--timeout-sec', '60', '--msgs', '20', '--interval', '50', '--jitter', '0', '--settle', '1000', '--seed', '3'];
    const run = await cli('shards/coordinator/main.ts', args, { SHARDS: runners.map((x) => x.url).join(','), BENCH_RUNNER_TOKEN: TOKEN });
    expect(run.html).toBe(run.json.replace(/\.json$/, '.html'));
    const merged = JSON.parse(readFileSync(run.json, 'utf8')) as MultiShardReport;
    expect(merged.perShard.map((s) => s.status)).toEqual(['done', 'done']);
    const r = await openReport(browser.context, run.html, 'report-multi-shard.png');
    expectChartsDrawn(r, run.html);
    expect(r.charts.map((c) => c.id)).toEqual(['shard-counts', 'shard-p99', 'merged-latency-cdf-raw', 'merged-latency-cdf-min-normalised']);
    expect(r.charts.find((c) => c.id === 'shard-counts')!.series).toBe(2);
    const html = readFileSync(run.html, 'utf8');
    expect(html).toContain('npm run bench:multi -- ');
    expect(html).not.toContain(TOKEN);
    // Shared-stream runs carry clock offsets: the same result with offsets measured against these two shards' GET /time.
    const offsets = await Promise.all(runners.map(async (x, i) => ({ name: `s${i + 1}`, ...pick(combineClock(await measureOffset(x.url), await measureOffset(x.url))) })));
    const withClock = { ...merged, mode: 'shared-stream' as const, clock: { publisher: 's1', offsets, maxUncertaintyMs: Math.max(...offsets.map((o) => o.uncertaintyMs)) }, test: 'multi-shard' };
    const clockHtml = await writeReport(run.json.replace(/\.json$/, '-clock.json'), withClock, { command: 'npm run bench:multi -- --shared-stream' }, COORDINATOR_PAGES);
    const c = await openReport(browser.context, clockHtml, 'report-multi-shard-clock.png');
    expectChartsDrawn(c, clockHtml);
    expect(c.charts.find((x) => x.id === 'clock-offsets')!.points).toBe(2);
  });

  it('multi-shard idle: per-shard asked-for and subscribed counts and the fleet\'s figures, not delivery columns of n/a', { timeout: 150_000 }, async () => {
    const args = ['--test', 'idle', '--target', 'ws', '--per-shard-n', '15', '--poll-ms', '200', '--timeout-sec', '60', '--hold', '2', '--ramp', '100'];
    const run = await cli('shards/coordinator/main.ts', args, { SHARDS: runners.map((x) => x.url).join(','), BENCH_RUNNER_TOKEN: TOKEN });
    const merged = JSON.parse(readFileSync(run.json, 'utf8')) as MultiShardReport;
    expect(merged.perShard.map((s) => [s.status, s.clients, s.connected])).toEqual([['done', 15, 15], ['done', 15, 15]]);
    const r = await openReport(browser.context, run.html, 'report-multi-shard-idle.png');
    expectChartsDrawn(r, run.html);
    expect(r.charts.map((c) => c.id)).toEqual(['shard-counts', 'shard-target-bytes']);
    // Both series drawn over the two shards, named on the x axis.
    const counts = r.charts.find((c) => c.id === 'shard-counts')!;
    expect(counts).toMatchObject({ series: 2, points: 4 });
    expect(counts.xLabel).toMatch(/^1 = s1 \(done\), 2 = s2 \(done\)$/);
    const html = readFileSync(run.html, 'utf8');
    const table = /<table id="summary">(.*?)<\/table>/s.exec(html)![1]!;
    expect(table).toContain('<th>subscribed</th><th>target B/conn</th>');
    expect(table).not.toContain('n/a');
    expect(table).not.toMatch(/<th>(received|lost|p99 ms)<\/th>/);
    expect(table).toMatch(/<td>fleet \(merged\)<\/td><td>valid<\/td><td>30<\/td><td>30<\/td>/);
  });
});
