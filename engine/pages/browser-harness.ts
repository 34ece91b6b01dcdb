import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium: CI installs it (.ci/run); the browser tests skip only when it is absent. */
export const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = resolve('test-artifacts');

export interface ChartState {
  id: string;
  points: number;
  series: number;
  xLabel: string;
  yLabel: string;
  xTicks: number;
  yTicks: number;
  markers: number;
  /** Non-blank pixels in the chart's canvas: the plot really drew something. */
  inked: number;
  error: string | null;
  /** The y axis' tick labels as drawn. */
  yTickLabels?: string[];
  /** Every marker label drawn on the plot, [x, y, width, height] in CSS px, and the plot's width. */
  labelBoxes?: [number, number, number, number][];
  plotWidth?: number;
  /** The y axis' width and the width its widest tick label needs, CSS px. */
  yAxisFit?: { size: number; need: number };
}

export interface OpenedReport {
  requests: string[];
  pageErrors: string[];
  renderMs: number;
  charts: ChartState[];
  banner: { severity: string; flags: string[] }[];
  verdicts: { target: string; level: string }[];
  screenshot: string;
}

/** A headless Chromium with a fresh profile and nothing that phones home, for opening reports from files. */
export async function openBrowser(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'rebound-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Open a report file, record every request the page makes, read back each chart's state, keep a screenshot. */
export async function openReport(context: BrowserContext, htmlPath: string, shotName: string): Promise<OpenedReport> {
  const page = await context.newPage();
  const requests: string[] = [];
  const pageErrors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  try {
    await page.goto(pathToFileURL(htmlPath).href);
    await page.waitForSelector('body[data-rendered="true"]', { timeout: 20_000 });
    const state = await page.evaluate(() => {
      const num = (v: string | undefined) => Number(v ?? 'NaN');
      const charts = [...document.querySelectorAll<HTMLElement>('figure.chart')].map((f) => {
        const canvas = f.querySelector('canvas');
        let inked = 0;
        if (canvas) {
          const px = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
          for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) inked++;
        }
        return {
          id: f.dataset.chart ?? '',
          points: num(f.dataset.points),
          series: num(f.dataset.series),
          xLabel: f.dataset.xLabel ?? '',
          yLabel: f.dataset.yLabel ?? '',
          xTicks: num(f.dataset.xTicks),
          yTicks: num(f.dataset.yTicks),
          markers: num(f.dataset.markers),
          inked,
          error: f.dataset.error ?? null,
          yTickLabels: JSON.parse(f.dataset.yTickLabels ?? '[]') as string[],
          labelBoxes: JSON.parse(f.dataset.labelBoxes ?? '[]') as [number, number, number, number][],
          plotWidth: num(f.dataset.plotWidth),
          yAxisFit: JSON.parse(f.dataset.yAxisFit ?? 'null') as { size: number; need: number },
        };
      });
      const banner = [...document.querySelectorAll<HTMLElement>('#validity .banner')].map((b) => ({ severity: b.dataset.severity ?? '', flags: [...b.querySelectorAll<HTMLElement>('li[data-flag]')].map((li) => li.dataset.flag ?? '') }));
      const verdicts = [...document.querySelectorAll<HTMLElement>('.verdict')].map((v) => ({ target: v.dataset.target ?? '', level: v.dataset.level ?? '' }));
      return { charts, banner, verdicts, renderMs: num(document.body.dataset.renderMs) };
    });
    mkdirSync(ARTIFACTS, { recursive: true });
    const screenshot = join(ARTIFACTS, shotName);
    await page.screenshot({ path: screenshot, fullPage: true });
    return { ...state, requests, pageErrors, screenshot };
  } finally {
    await page.close();
  }
}

/**
 * What is wrong with an opened report, as readable lines (none when it is right): a page error,
 * a request beyond the file itself, no charts, or a chart that failed, has no data, lacks an axis
 * label or ticks, or drew fewer than `minInked` pixels.
 */
export function chartProblems(r: OpenedReport, htmlPath: string, minInked: number): string[] {
  const out = r.pageErrors.map((e) => `page error: ${e}`);
  const self = pathToFileURL(htmlPath).href;
  if (r.requests.length !== 1 || r.requests[0] !== self) out.push(`requests other than the file itself, once: ${JSON.stringify(r.requests)}`);
  if (r.charts.length === 0) out.push('no charts');
  for (const c of r.charts) {
    if (c.error !== null) out.push(`${c.id}: ${c.error}`);
    if (!(c.points > 0)) out.push(`${c.id}: no data points`);
    if (c.xLabel.length === 0) out.push(`${c.id}: no x label`);
    if (c.yLabel.length === 0) out.push(`${c.id}: no y label`);
    if (!(c.xTicks > 1)) out.push(`${c.id}: ${c.xTicks} x ticks`);
    if (!(c.yTicks > 1)) out.push(`${c.id}: ${c.yTicks} y ticks`);
    if (!(c.inked > minInked)) out.push(`${c.id}: drew ${c.inked} pixels (want > ${minInked})`);
  }
  return out;
}
