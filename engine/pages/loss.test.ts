import { describe, expect, it } from 'vitest';
import { soakLossInput } from '../../runners/capacity/soak/sections.ts';
import type { ScenarioResult } from '../../runners/capacity/types.ts';
import { renderPage } from './page.ts';
import { lossInputOf, lossSections, lossStack } from './loss.ts';
import type { ReportModel } from './types.ts';

/**
 * The shared "Lost by cause" renderer's reading of results (pure; the browser tests render real
 * runs): fields read wherever a runner puts them, absent fields give no section rather than zeros,
 * and the stacked bar's markup escapes what it prints.
 */
describe('lossInputOf / soakLossInput', () => {
  it('reads the fields off any result; without lostDeliveries the causes give the total', () => {
    expect(lossInputOf('ws', { lostDeliveries: 5, lossByCause: { offline_nothing_to_resume: 5 }, resumeOutcomes: { nothing_to_resume: 2 }, replayedDeliveries: 0 })).toEqual({ label: 'ws', lostDeliveries: 5, lossByCause: { offline_nothing_to_resume: 5 }, resumeOutcomes: { nothing_to_resume: 2 }, replayedDeliveries: 0 });
    expect(lossInputOf('x', { lossByCause: { too_slow: 3, history_evicted: 1 } }).lostDeliveries).toBe(4);
    expect(lossInputOf('old', { lostDeliveries: 7 })).toEqual({ label: 'old', lostDeliveries: 7 });
  });
  it('a soak result: on the result, in its detail, or in its step metrics', () => {
    const base = { target: 'ws', steps: [{ metrics: {} }] } as unknown as ScenarioResult;
    expect(soakLossInput({ ...base, detail: { kind: 'soak', lostDeliveries: 2, lossByCause: { lost_while_connected: 2 } } } as unknown as ScenarioResult).lossByCause).toEqual({ lost_while_connected: 2 });
    expect(soakLossInput({ ...base, steps: [{ metrics: { lostDeliveries: 1, resumeOutcomes: { nothing_to_resume: 1 } } }] } as unknown as ScenarioResult).resumeOutcomes).toEqual({ nothing_to_resume: 1 });
    expect(lossSections([soakLossInput(base)])).toEqual([]);
  });
});

describe('lossSections', () => {
  it('no result with the fields: no section (an older result is not "nothing lost")', () => {
    expect(lossSections([lossInputOf('a', { lostDeliveries: 3 }), lossInputOf('b', { lostDeliveries: 0 })])).toEqual([]);
  });
  it('nothing lost, nobody reconnected: both sections say so instead of drawing empty charts', () => {
    const s = lossSections([lossInputOf('replay', { lostDeliveries: 0, lossByCause: {}, resumeOutcomes: {} })]);
    expect(s.map((x) => [x.title, x.charts.length, x.tables?.length ?? 0, x.omitted])).toEqual([
      ['Lost by cause', 0, 0, ['Lost by cause: no delivery was lost in this run.']],
      ['Resume outcomes', 0, 0, ['Resume outcomes: no client reconnected in this run.']],
    ]);
  });
  it('several targets: a stacked bar of the ones with causes, segments in the union\'s order', () => {
    const st = lossStack([lossInputOf('a', { lostDeliveries: 4, lossByCause: { not_back_by_end: 1, lost_while_connected: 3 } }), lossInputOf('old', { lostDeliveries: 9 }), lossInputOf('b', { lostDeliveries: 0, lossByCause: {} })])!;
    expect(st.bars.map((b) => [b.label, b.total, b.segments.map((g) => g.key)])).toEqual([['a', 4, ['lost_while_connected', 'not_back_by_end']], ['b', 0, []]]);
    expect(st.legend.map((l) => l.key)).toEqual(['lost_while_connected', 'not_back_by_end']);
  });
  it('the page escapes target names in the bar, its title and its description', () => {
    const sections = lossSections([lossInputOf('<b>x</b>', { lostDeliveries: 1, lossByCause: { too_slow: 1 } }), lossInputOf('y', { lostDeliveries: 2, lossByCause: { too_slow: 2 } })]);
    const model: ReportModel = { title: 't', subtitle: '', command: '', seed: null, generatedAt: '', flags: null, verdicts: [], summary: [], sections };
    const html = renderPage(model);
    expect(html).not.toContain('<b>x</b>');
    expect(html).toContain('&lt;b&gt;x&lt;/b&gt;: 1 lost deliveries, offline, cut as too slow 1.');
  });
});
