import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chartProblems, type ChartState, type OpenedReport } from './browser-harness.ts';

// The browser tests' one verdict on a rendered report, checked here on hand-written states (the browser tests feed it real ones).
const html = '/tmp/r.html';
const chart = (over: Partial<ChartState> = {}): ChartState => ({ id: 'latency', points: 10, series: 1, xLabel: 't', yLabel: 'ms', xTicks: 4, yTicks: 3, markers: 0, inked: 5000, error: null, ...over });
const report = (over: Partial<OpenedReport> = {}): OpenedReport => ({ requests: [pathToFileURL(html).href], pageErrors: [], renderMs: 5, charts: [chart()], banner: [], verdicts: [], screenshot: 'x.png', ...over });

describe('chartProblems', () => {
  it('passes a report whose every chart drew data on labelled axes, loaded from its file alone', () => {
    expect(chartProblems(report(), html, 1000)).toEqual([]);
  });

  it('names each thing wrong', () => {
    const r = report({ pageErrors: ['boom'], requests: [pathToFileURL(html).href, 'https://cdn.example/x.js'], charts: [chart({ id: 'a', points: 0, xLabel: '', yTicks: 1, inked: 600, error: 'bad data' })] });
    expect(chartProblems(r, html, 1000)).toEqual([
      'page error: boom',
      `requests other than the file itself, once: ${JSON.stringify(r.requests)}`,
      'a: bad data',
      'a: no data points',
      'a: no x label',
      'a: 1 y ticks',
      'a: drew 600 pixels (want > 1000)',
    ]);
    expect(chartProblems(report({ charts: [] }), html, 1000)).toEqual(['no charts']);
    expect(chartProblems(report({ charts: [chart({ inked: 600 })] }), html, 500)).toEqual([]);
  });
});
