import { describe, expect, it } from 'vitest';
import { defaultsOf } from '../../../lib/options.ts';
import { renderPage } from '../../../engine/pages/page.ts';
import type { ChartSpec } from '../../../engine/pages/types.ts';
import type { ScenarioResult } from '../types.ts';
import { SOAK_OPTIONS } from './options.ts';
import { judgeSoak, type HealthSample } from './rules.ts';
import type { SoakDetail } from './run.ts';
import { soakHealthRows, soakReportModel, soakRuleRows, soakSections } from './sections.ts';

const T = defaultsOf(SOAK_OPTIONS);

/** A result as run.ts shapes it, around a synthetic series (the rules and the drawing are what is checked). */
function result(target: string, f: (i: number, t: number) => Partial<HealthSample> = () => ({})): ScenarioResult {
  const series: HealthSample[] = Array.from({ length: 30 }, (_, i) => {
    const tSec = (i + 1) * 10;
    return { tSec, windowSec: 10, deliveries: 40_000, deliveriesPerSec: 4000, accepted: 200, p50Ms: 2, p99Ms: 9 + (i % 3), rssMb: 120 + (i % 2), cpuPct: 20, connected: 200, unexpectedDisconnects: 0, reconnects: 0, rigLagP99Ms: 2, rigLagMaxMs: 10, ...f(i, tSec) };
  });
  const judgement = judgeSoak(series, { deliveredPct: 100, lostDeliveries: 0, duplicates: 0 }, T);
  const detail: SoakDetail = { kind: 'soak', durationSec: 300, sampleSec: 10, warmupSec: 30, clients: 200, rate: 20, clientKind: 'lean', rssSource: 'proc', series, judgement, runner: { runnerPeakRssMb: 90, runnerLoopLagMs: { p50: 0, p99: 2, max: 10 }, runnerStalledWindowsPct: 0 } };
  return {
    scenario: 'soak',
    title: 'Soak',
    target,
    startedAt: '2026-11-30T06:00:00.000Z',
    params: { maxRigLagMs: T.maxRigLagMs },
    steps: [{ step: { durationSec: 300 }, pass: judgement.verdict === 'pass', metrics: { verdict: judgement.verdict, sustainedDeliveriesPerSec: 4000, rssSlopeMbPerMin: judgement.rules[1]!.value, lateP99Ms: judgement.rules[2]!.value } }],
    headline: { name: 'sustained deliveries/s', value: 4000, unit: 'deliveries/s', higherIsBetter: true },
    validity: { valid: true, flags: judgement.flags },
    notShown: [],
    detail: detail as unknown as Record<string, unknown>,
  };
}

const byId = (charts: ChartSpec[], id: string) => charts.find((c) => c.id === id)!;

describe('soak report sections', () => {
  it('one section per target with the health series, each rule\'s bound drawn and its verdict in words', () => {
    const flat = result('replay');
    const leak = result('ws', (i, t) => ({ rssMb: 120 + t / 10, ...(i === 20 ? { rigLagP99Ms: 90 } : {}) }));
    const [a, b] = soakSections([flat, leak]);
    expect(a!.title).toBe('Soak: replay: PASS');
    expect(b!.title).toBe('Soak: ws: FAIL');
    expect(b!.intro).toMatch(/memory FAIL: RSS slope 6 MB\/min/);
    expect(b!.intro).toMatch(/SOAK_RIG_LAG \(warning\)/);
    expect(a!.charts.map((c) => c.id)).toEqual(['soak-throughput-replay', 'soak-latency-replay', 'soak-memory-replay', 'soak-connections-replay', 'soak-rig-replay']);

    const tp = byId(a!.charts, 'soak-throughput-replay');
    expect(tp.x).toEqual((flat.detail as unknown as SoakDetail).series.map((w) => w.tSec));
    expect(tp.hlines!.map((h) => h.y)).toEqual([4000, 3600]); // early mean and early − 10%
    expect(tp.markers!.map((m) => m.label)).toEqual(['warm-up (not judged)', 'early third', 'late third']);

    const mem = byId(b!.charts, 'soak-memory-ws');
    const fit = mem.series.find((s) => s.label === 'least-squares fit')!.values;
    // The fit is drawn over the judged windows only, and follows the leak: 1 MB per 10 s window.
    expect(fit.slice(0, 3)).toEqual([null, null, null]);
    expect(fit[10]! - fit[9]!).toBeCloseTo(1, 5);
    expect(mem.title).toMatch(/\[FAIL\]$/);

    const lat = byId(b!.charts, 'soak-latency-ws');
    expect(lat.markers!.filter((m) => m.label === 'rig lag').map((m) => m.x)).toEqual([210]);
    expect(lat.hlines![0]!.y).toBe((leak.detail as unknown as SoakDetail).judgement.rules[2]!.bound);
  });

  it('a target whose memory was not sampled says so instead of drawing an empty chart', () => {
    const [s] = soakSections([result('socketio', () => ({ rssMb: null, cpuPct: null }))]);
    expect(s!.title).toBe('Soak: socketio: INCONCLUSIVE');
    expect(s!.charts.map((c) => c.id)).not.toContain('soak-memory-socketio');
    expect(s!.omitted).toEqual([expect.stringMatching(/memory rule is unmeasured/)]);
  });

  it('a result without a soak series renders a note, not an exception', () => {
    const { detail: _d, ...bare } = result('replay');
    expect(soakSections([bare])).toEqual([{ title: 'Soak: replay', charts: [], omitted: [expect.stringMatching(/no soak health series/)] }]);
  });

  it('tables: rule verdicts per target and the health series per window', () => {
    const r = result('replay');
    const rules = soakRuleRows([r]);
    expect(rules[0]).toEqual(['target', 'rule', 'value', 'bound', 'verdict', 'why']);
    expect(rules.slice(1).map((x) => `${x[1]} ${x[4]}`)).toEqual(['throughput PASS', 'memory PASS', 'latency PASS', 'disconnects PASS', 'delivery PASS']);
    const health = soakHealthRows(r);
    expect(health).toHaveLength(31);
    expect(health[1]!.at(-1)).toBe('warm-up');
    expect(health[4]!.at(-1)).toBe('early');
    expect(health[30]!.at(-1)).toBe('late');
  });

  it('the page carries the sections\' chart data, the verdict tiles and the rule table', () => {
    const model = soakReportModel([result('replay'), result('ws', (i) => ({ unexpectedDisconnects: i === 5 ? 3 : 0 }))], { command: 'npm run bench:soak' });
    expect(model.verdicts.map((v) => [v.target, v.level])).toEqual([['replay', 'good'], ['ws', 'lost']]);
    const html = renderPage(model);
    const data = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)![1]!) as { sections: { charts: ChartSpec[] }[] };
    expect(data.sections.map((s) => s.charts.length)).toEqual([5, 5]);
    const conn = data.sections[1]!.charts.find((c) => c.id === 'soak-connections-ws')!;
    expect(conn.series.find((s) => s.label === 'unexpected disconnects')!.values[5]).toBe(3);
    expect(html).toContain('Soak: ws: FAIL');
    expect(html).toContain('3 unexpected disconnects over the soak');
  });
});
