import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOSS_CAUSE_LABELS, LOSS_CAUSES, outcomeLabel } from '../measure/loss-causes.ts';
import { columnLabel } from '../../runners/jitter/table.ts';
import type { JitterResult } from '../../runners/jitter/result.ts';
import { CHROMIUM, chartProblems, openBrowser, openReport } from './browser-harness.ts';
import { writeReport } from './index.ts';
import { jitterModule } from '../../runners/jitter/module.ts';

/**
 * "Lost by cause" and "Resume outcomes" as Chromium shows them, from the results of real short
 * runs (`npm run bench` on local servers, port 0): the comparison page's stacked bar (one bar per
 * target, segments as long as their counts, legend, an accessible title and description, the
 * numbers in a table beside it), a single target's page, and a result from before loss causes
 * next to a new one (n/a, not a crash).
 */
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`SKIPPED loss report browser tests: ${CHROMIUM} not found`);

function bench(args: string[]): Promise<{ json: string; html: string; results: JitterResult[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'rebound-loss-report-'));
  return new Promise((resolve, reject) => {
    execFile('node', ['--import', 'tsx', 'cli/bench.ts', ...args], { env: { ...process.env, RESULTS_DIR: dir }, timeout: 150_000 }, (err, _stdout, stderr) => {
      const json = /results: (\S+\.json)/.exec(stderr)?.[1];
      const html = /report: (\S+\.html)/.exec(stderr)?.[1];
      // Exit code 2 = a validity flag fired (clients offline at the end, loop lag on a busy box): the report is still written.
      if (!json || !html || (err && (err as { code?: number }).code !== 2)) return reject(new Error(`bench failed: ${err?.message}\n${stderr.slice(-2000)}`));
      resolve({ json, html, results: JSON.parse(readFileSync(json, 'utf8')) as JitterResult[] });
    });
  });
}

interface StackState {
  title: string;
  desc: string;
  labelledBy: string[];
  role: string | null;
  bars: { target: string; total: number; segments: { cause: string; value: number; width: number }[] }[];
  legend: string[];
  tables: Record<string, string[][]>;
  /** The stack figure's and the table column's boxes: side by side on a wide page. */
  stackBox: { x: number; y: number; w: number; h: number };
  tableBox: { x: number; y: number; w: number; h: number } | null;
}

async function readLoss(page: Page, htmlPath: string): Promise<{ stack: StackState | null; tables: Record<string, string[][]>; sections: string[] }> {
  await page.goto(pathToFileURL(htmlPath).href);
  await page.waitForSelector('body[data-rendered="true"]', { timeout: 20_000 });
  return page.evaluate(() => {
    const rows = (t: HTMLTableElement) => [...t.rows].map((r) => [...r.cells].map((c) => c.textContent ?? ''));
    const tables: Record<string, string[][]> = {};
    for (const t of document.querySelectorAll<HTMLTableElement>('table[data-table]')) tables[t.dataset.table!] = rows(t);
    const sections = [...document.querySelectorAll('section.charts h2')].map((h) => h.textContent ?? '');
    const fig = document.querySelector<HTMLElement>('figure.stack');
    if (!fig) return { stack: null, tables, sections };
    const svg = fig.querySelector('svg')!;
    const box = (e: Element) => {
      const b = e.getBoundingClientRect();
      return { x: b.x, y: b.y, w: b.width, h: b.height };
    };
    const tableCol = fig.nextElementSibling;
    return {
      tables,
      sections,
      stack: {
        title: svg.querySelector('title')?.textContent ?? '',
        desc: svg.querySelector('desc')?.textContent ?? '',
        labelledBy: (svg.getAttribute('aria-labelledby') ?? '').split(/\s+/).map((id) => document.getElementById(id)?.textContent ?? `missing #${id}`),
        role: svg.getAttribute('role'),
        bars: [...svg.querySelectorAll<SVGGElement>('g.bar')].map((g) => ({
          target: g.dataset.target ?? '',
          total: Number(g.dataset.total),
          segments: [...g.querySelectorAll<SVGRectElement>('rect.seg')].map((r) => ({ cause: r.dataset.cause ?? '', value: Number(r.dataset.value), width: r.getBoundingClientRect().width })),
        })),
        legend: [...fig.querySelectorAll<HTMLElement>('ul.legend li')].map((li) => li.textContent ?? ''),
        tables,
        stackBox: box(fig),
        tableBox: tableCol ? box(tableCol) : null,
      },
    };
  });
}

describe.skipIf(!hasChromium)('lost by cause and resume outcomes in Chromium', () => {
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  // ws and default Socket.IO lose what was published while they were away; the replay server's
  // default client backs off 1.5-9 s, so with a 1.5 s settle some of its clients are not back.
  const run = hasChromium ? bench(['--targets', 'ws,socketio,replay', '--tuned', 'false', '--clients', '16', '--msgs', '14', '--interval', '500', '--jitter', '1', '--jitter-ms', '500', '--ramp', '200', '--settle', '1500', '--seed', '23']) : Promise.resolve(undefined);
  run.catch(() => {});

  beforeAll(async () => {
    browser = await openBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('comparison page: one stacked bar per target, segments sized by their counts, legend, title and description, figures in a table beside it', { timeout: 200_000 }, async () => {
    const b = (await run)!;
    expect(b.results.map(columnLabel)).toEqual(['ws', 'socketio', 'replay']);
    for (const r of b.results) expect(Object.values(r.lossByCause!).reduce((a, x) => a + x, 0)).toBe(r.lostDeliveries);
    expect(b.results[0]!.lostDeliveries).toBeGreaterThan(0);
    expect(b.results[1]!.lostDeliveries).toBeGreaterThan(0);
    const opened = await openReport(browser.context, b.html, 'report-loss-comparison.png');
    expect(chartProblems(opened, b.html, 500)).toEqual([]);
    const page = await browser.context.newPage();
    try {
      const { stack, tables } = await readLoss(page, b.html);
      expect(stack).not.toBeNull();
      const s = stack!;
      expect(s.role).toBe('img');
      expect(s.labelledBy[0]).toBe('Lost by cause, per target (lost deliveries)');
      // The description reads every bar's figures.
      for (const r of b.results) expect(s.desc).toContain(`${columnLabel(r)}: ${r.lostDeliveries.toLocaleString('en-US')} lost deliveries`);
      expect(s.labelledBy[1]).toBe(s.desc);
      expect(s.bars.map((x) => [x.target, x.total])).toEqual(b.results.map((r) => [columnLabel(r), r.lostDeliveries]));
      const causes = LOSS_CAUSES.filter((c) => b.results.some((r) => (r.lossByCause![c] ?? 0) > 0));
      expect(s.legend).toEqual(causes.map((c) => LOSS_CAUSE_LABELS[c]));
      // Each segment is its cause's count; lengths on one shared scale.
      const pxPer = Math.max(...s.bars.map((x) => x.segments.reduce((a, g) => a + g.width, 0))) / Math.max(...b.results.map((r) => r.lostDeliveries));
      for (const [k, bar] of s.bars.entries()) {
        const r = b.results[k]!;
        expect(bar.segments.map((g) => [g.cause, g.value])).toEqual(causes.filter((c) => r.lossByCause![c]).map((c) => [c, r.lossByCause![c]]));
        for (const g of bar.segments) expect(Math.abs(g.width - g.value * pxPer)).toBeLessThan(1.5);
      }
      // ws and default Socket.IO: lost while offline, nothing to resume.
      for (const k of [0, 1]) expect(s.bars[k]!.segments.find((g) => g.cause === 'offline_nothing_to_resume')!.value).toBeGreaterThan(0);
      // The numbers beside the bar: right of it on a 1400 px page, and the same figures.
      expect(s.tableBox).not.toBeNull();
      expect(s.tableBox!.x).toBeGreaterThanOrEqual(s.stackBox.x + s.stackBox.w - 1);
      const loss = tables['lost-by-cause']!;
      expect(loss[0]).toEqual(['cause', 'ws', 'socketio', 'replay']);
      for (const c of causes) {
        const row = loss.find((x) => x[0] === LOSS_CAUSE_LABELS[c])!;
        b.results.forEach((r, k) => expect(row[k + 1]!.split(' ')[0]).toBe((r.lossByCause![c] ?? 0).toLocaleString('en-US')));
      }
      expect(loss.at(-1)).toEqual(['total lost', ...b.results.map((r) => r.lostDeliveries.toLocaleString('en-US'))]);
      // Resume outcomes: every reconnect, by outcome.
      const resume = tables['resume-outcomes']!;
      const ws = b.results[0]!;
      expect(resume).toContainEqual([outcomeLabel('nothing_to_resume'), ws.reconnects.toLocaleString('en-US'), b.results[1]!.reconnects.toLocaleString('en-US'), '0']);
      expect(resume.find((x) => x[0] === 'reconnects')).toEqual(['reconnects', ...b.results.map((r) => Object.values(r.resumeOutcomes!).reduce((a, x) => a + x, 0).toLocaleString('en-US'))]);
    } finally {
      await page.close();
    }
  });

  it('single target page: its bar chart draws, its tables say the same; a result from before loss causes gets n/a, and a page of only such results has no such section', { timeout: 200_000 }, async () => {
    const b = (await run)!;
    const ws = b.results[0]!;
    const dir = mkdtempSync(join(tmpdir(), 'rebound-loss-report-'));
    const one = await writeReport(join(dir, 'ws.json'), [ws], { command: 'npm run bench -- --targets ws' }, [jitterModule]);
    const opened = await openReport(browser.context, one, 'report-loss-single.png');
    expect(chartProblems(opened, one, 200)).toEqual([]);
    const bar = opened.charts.find((c) => c.id === 'lost-by-cause-ws')!;
    expect(bar.series).toBe(Object.keys(ws.lossByCause!).length);
    // An older result: the same real result without the fields loss causes added.
    const { lossByCause: _l, resumeOutcomes: _r, replayedDeliveries: _p, lateDeliveries: _d, ...older } = ws;
    const mixedJson = join(dir, 'mixed.json');
    writeFileSync(mixedJson, JSON.stringify([older, b.results[1]]));
    const mixed = await writeReport(mixedJson, [older as JitterResult, b.results[1]!], { command: 'test' }, [jitterModule]);
    const onlyOld = await writeReport(join(dir, 'old.json'), [older as JitterResult], { command: 'test' }, [jitterModule]);
    const page = await browser.context.newPage();
    try {
      const single = await readLoss(page, one);
      expect(single.stack).toBeNull();
      expect(single.sections).toEqual(expect.arrayContaining(['Lost by cause', 'Resume outcomes']));
      expect(single.tables['lost-by-cause']![1]).toEqual([LOSS_CAUSE_LABELS.offline_nothing_to_resume, `${ws.lossByCause!.offline_nothing_to_resume!.toLocaleString('en-US')} (${Math.round((ws.lossByCause!.offline_nothing_to_resume! / ws.lostDeliveries) * 1000) / 10}%)`]);
      const m = await readLoss(page, mixed);
      expect(m.stack!.bars.map((x) => x.target)).toEqual(['socketio']);
      expect(m.tables['lost-by-cause']!.at(-1)).toEqual(['total lost', `${ws.lostDeliveries.toLocaleString('en-US')} (no causes in this result)`, b.results[1]!.lostDeliveries.toLocaleString('en-US')]);
      expect(m.tables['resume-outcomes']!.find((x) => x[0] === 'reconnects')![1]).toBe('n/a');
      const old = await readLoss(page, onlyOld);
      expect(old.sections).not.toContain('Lost by cause');
      expect(old.sections).not.toContain('Resume outcomes');
    } finally {
      await page.close();
    }
    const o = await openReport(browser.context, onlyOld, 'report-loss-older.png');
    expect(o.pageErrors).toEqual([]);
  });
});
