import { colorFor, round, slug } from '../../../engine/pages/charts/common.ts';
import type { ChartSpec, MarkerSpec, ReportMeta, ReportModel, Section, Verdict } from '../../../engine/pages/types.ts';
import { lossInputOf, lossSections, type LossInput } from '../../../engine/pages/loss.ts';
import { bannerFlags, reportHead } from '../../../engine/pages/validity.ts';
import type { ScenarioResult } from '../types.ts';
import type { SoakDetail } from './run.ts';

/**
 * The soak in the report (docs/soak.md): its health series, one chart per rule, each with the
 * bound the rule held it to, and the verdicts in words. Built from ScenarioResult.detail only, so
 * a stored result renders the same as a fresh one.
 */

function soakDetail(r: ScenarioResult): SoakDetail | undefined {
  const d = r.detail as Partial<SoakDetail> | undefined;
  return d && d.kind === 'soak' && Array.isArray(d.series) && d.judgement ? (d as SoakDetail) : undefined;
}

const RED = '#c62828';
const GREY = '#757575';
const WORDS = { pass: 'PASS', fail: 'FAIL', inconclusive: 'INCONCLUSIVE', insufficient_duration: 'INSUFFICIENT_DURATION' } as const;
const verdictOf = (r: ScenarioResult) => String(r.steps[0]?.metrics.verdict ?? 'inconclusive') as keyof typeof WORDS;
const fmt = (v: number | null, unit = '') => (v === null ? 'n/a' : `${v !== 0 && Math.abs(v) < 0.01 ? v.toPrecision(2) : v.toLocaleString('en-US')}${unit}`);

/** Warm-up shaded, the early and late thirds the rules compare marked. */
function spans(d: SoakDetail): MarkerSpec[] {
  const s = d.series;
  const j = d.judgement;
  const span = (ix: number[], label: string, color: string): MarkerSpec[] => (ix.length ? [{ x: s[ix[0]!]!.tSec - s[ix[0]!]!.windowSec, x2: s[ix.at(-1)!]!.tSec, label, color }] : []);
  return [...(d.warmupSec > 0 ? [{ x: 0, x2: d.warmupSec, label: 'warm-up (not judged)', color: '#bdbdbd' }] : []), ...span(j.early, 'early third', '#90caf9'), ...span(j.late, 'late third', '#ffcc80')];
}

function charts(r: ScenarioResult, d: SoakDetail): { charts: ChartSpec[]; omitted: string[] } {
  const s = d.series;
  const j = d.judgement;
  const id = (name: string) => `soak-${name}-${slug(r.target)}`;
  const x = s.map((w) => w.tSec);
  const xLabel = 'seconds since publishing began';
  const rule = (name: string) => j.rules.find((v) => v.rule === name);
  const tag = (name: string) => {
    const v = rule(name);
    return v ? ` [${v.status.toUpperCase()}]` : '';
  };
  const omitted: string[] = [];
  const out: ChartSpec[] = [];
  const decay = rule('throughput')?.bound ?? null;
  out.push({
    id: id('throughput'),
    title: `Throughput: ${r.target}${tag('throughput')}`,
    note: `First deliveries per second in each ${d.sampleSec} s window (one ledger, duplicates never counted). The late third's mean must stay above the red line (early third's mean − ${decay ?? '?'}%).`,
    xLabel,
    yLabel: 'deliveries per second',
    yRange: [0, Math.max(1, ...s.map((w) => w.deliveriesPerSec)) * 1.15],
    x,
    series: [{ label: 'deliveries/s', values: s.map((w) => w.deliveriesPerSec), color: colorFor(0), width: 2, points: true, reduce: 'min' }],
    markers: spans(d),
    hlines: j.earlyThroughput !== null && decay !== null ? [{ y: round(j.earlyThroughput, 1), label: 'early mean', color: GREY }, { y: round(j.earlyThroughput * (1 - decay / 100), 1), label: `early − ${decay}%`, color: RED }] : [],
  });
  const lat = rule('latency');
  out.push({
    id: id('latency'),
    title: `Latency probe: ${r.target}${tag('latency')}`,
    note: `p50 and p99 of the first deliveries arriving in each window. The late third's median p99 must stay under the red line; windows where the runner itself lagged (marked) are left out.`,
    xLabel,
    yLabel: 'ms',
    x,
    series: [
      { label: 'p99', values: s.map((w) => w.p99Ms), color: colorFor(5), width: 2, points: true, reduce: 'max' },
      { label: 'p50', values: s.map((w) => w.p50Ms), color: colorFor(0), width: 2, points: true, reduce: 'max' },
    ],
    markers: [...spans(d), ...j.rigLagged.map((i) => ({ x: s[i]!.tSec, label: 'rig lag', color: '#6a1b9a' }))],
    hlines: lat?.bound != null ? [{ y: lat.bound, label: 'late p99 bound', color: RED }] : [],
  });
  if (s.some((w) => w.rssMb !== null)) {
    const fit = j.rssFit;
    const fitted = s.map((w) => (fit && w.tSec >= fit.fromSec && w.tSec <= fit.toSec ? round(fit.interceptMb + (fit.slopeMbPerMin * w.tSec) / 60, 2) : null));
    const hasCpu = s.some((w) => w.cpuPct !== null);
    out.push({
      id: id('memory'),
      title: `Target memory: ${r.target}${tag('memory')}`,
      note: `Target RSS at each window's end (${d.rssSource === 'proc' ? 'its process tree, /proc' : 'its /metrics'}); the dashed line is the least-squares fit over the judged windows: ${fit ? fmt(Number(fit.slopeMbPerMin.toPrecision(3)), ' MB/min') : 'not fitted'} (bound ${rule('memory')?.bound ?? '?'} MB/min).${hasCpu ? ' CPU on the right axis.' : ''}`,
      xLabel,
      yLabel: 'RSS, MB',
      ...(hasCpu ? { y2Label: 'CPU, % of one core' } : {}),
      x,
      series: [
        { label: 'RSS', values: s.map((w) => w.rssMb), color: colorFor(2), width: 2, points: true, spanGaps: true, reduce: 'max' },
        { label: 'least-squares fit', values: fitted, color: RED, width: 1, dash: [6, 4], spanGaps: true, reduce: 'mean' },
        ...(hasCpu ? [{ label: 'CPU', values: s.map((w) => w.cpuPct), color: colorFor(6), width: 1, axis: 'y2' as const, spanGaps: true, reduce: 'max' as const }] : []),
      ],
      markers: spans(d),
    });
  } else omitted.push(`Target memory: not sampled (${r.target} was neither started by this runner nor answered /metrics); the memory rule is unmeasured.`);
  out.push({
    id: id('connections'),
    title: `Connections: ${r.target}${tag('disconnects')}`,
    note: 'Clients subscribed at each window\'s end; bars count disconnects the runner did not cause and reconnects in the window (right axis). Any unexpected disconnect fails the rule at its default bound.',
    xLabel,
    yLabel: 'clients subscribed',
    y2Label: 'per window',
    yRange: [0, d.clients],
    x,
    series: [
      { label: 'subscribed', values: s.map((w) => w.connected), color: colorFor(0), width: 2, reduce: 'min' },
      { label: 'unexpected disconnects', values: s.map((w) => w.unexpectedDisconnects), color: RED, bars: true, axis: 'y2', reduce: 'max' },
      { label: 'reconnects', values: s.map((w) => w.reconnects), color: colorFor(1), bars: true, axis: 'y2', reduce: 'max' },
    ],
  });
  out.push({
    id: id('rig'),
    title: `Rig health (runner event-loop lag): ${r.target}`,
    note: 'The runner\'s own loop lag per window. Above the line the window\'s latency is the rig\'s, not the target\'s: a validity flag, never a target failure.',
    xLabel,
    yLabel: 'ms beyond the 10 ms sampling resolution',
    x,
    series: [
      { label: 'p99', values: s.map((w) => w.rigLagP99Ms), color: colorFor(3), width: 2, reduce: 'max' },
      { label: 'max', values: s.map((w) => w.rigLagMaxMs), color: GREY, width: 1, dash: [4, 3], reduce: 'max' },
    ],
    hlines: [{ y: Number((r.params as Record<string, unknown>).maxRigLagMs ?? 50), label: 'rig lag bound', color: RED }],
  });
  return { charts: out, omitted };
}

/** One section per soak result, the rule verdicts in its intro. */
export function soakSections(results: readonly ScenarioResult[]): Section[] {
  const out: Section[] = [];
  for (const r of results) {
    const d = soakDetail(r);
    if (!d) {
      out.push({ title: `Soak: ${r.target}`, charts: [], omitted: ['This result carries no soak health series (an older or failed run).'] });
      continue;
    }
    const c = charts(r, d);
    const rules = d.judgement.rules.map((v) => `${v.rule} ${v.status.toUpperCase()}: ${v.message}`).join(' · ');
    out.push({
      title: `Soak: ${r.target}: ${WORDS[verdictOf(r)]}`,
      intro: `${d.clients} ${d.clientKind} clients x ${d.rate} msg/s for ${round(d.durationSec / 60, 2)} min, a health sample every ${d.sampleSec} s; windows ending in the first ${d.warmupSec} s are shown but not judged. ${rules}${r.validity.flags.length ? ` · validity: ${r.validity.flags.map((f) => `${f.code} (${f.severity})`).join(', ')}` : ''}`,
      charts: c.charts,
      ...(c.omitted.length ? { omitted: c.omitted } : {}),
    });
  }
  return out;
}

/** Rule verdicts, one row per target and rule (the page's Numbers table). */
export function soakRuleRows(results: readonly ScenarioResult[]): string[][] {
  const rows = [['target', 'rule', 'value', 'bound', 'verdict', 'why']];
  for (const r of results) for (const v of soakDetail(r)?.judgement.rules ?? []) rows.push([r.target, v.rule, fmt(v.value, ` ${v.unit}`), fmt(v.bound, ` ${v.unit}`), v.status.toUpperCase(), v.message]);
  return rows;
}

/** The health series as a table (docs, CLI output). */
export function soakHealthRows(r: ScenarioResult): string[][] {
  const d = soakDetail(r);
  const rows = [['t (s)', 'deliveries/s', 'p50 ms', 'p99 ms', 'RSS MB', 'CPU %', 'subscribed', 'unexpected disc.', 'reconnects', 'rig lag p99 ms', 'judged']];
  if (!d) return rows;
  const judged = new Set(d.judgement.judged);
  d.series.forEach((w, i) => rows.push([String(w.tSec), String(w.deliveriesPerSec), fmt(w.p50Ms), fmt(w.p99Ms), fmt(w.rssMb), fmt(w.cpuPct), String(w.connected), String(w.unexpectedDisconnects), String(w.reconnects), String(w.rigLagP99Ms), judged.has(i) ? (d.judgement.early.includes(i) ? 'early' : d.judgement.late.includes(i) ? 'late' : 'yes') : 'warm-up']));
  return rows;
}

/**
 * A soak's loss fields for the shared "Lost by cause" renderer: on the result itself, its soak
 * detail, or its step's metrics, wherever the run put them (the first that has them).
 */
export function soakLossInput(r: ScenarioResult): LossInput {
  const places: unknown[] = [r, r.detail, r.steps[0]?.metrics];
  const found = places.find((p) => p && typeof p === 'object' && ('lossByCause' in p || 'resumeOutcomes' in p));
  return lossInputOf(r.target, found ?? r);
}

/** A whole page for soak results alone (the soak CLI; the capacity suite's page uses soakSections). */
export function soakReportModel(results: readonly ScenarioResult[], meta: ReportMeta): ReportModel {
  const level = { pass: 'good', inconclusive: 'late', insufficient_duration: 'late', fail: 'lost' } as const;
  const verdicts: Verdict[] = results.map((r) => {
    const v = verdictOf(r);
    const m = r.steps[0]?.metrics ?? {};
    return { target: r.target, level: level[v] ?? 'late', words: `soak ${WORDS[v] ?? v}`, detail: `${fmt((m.sustainedDeliveriesPerSec as number | null) ?? null)} deliveries/s, RSS slope ${fmt((m.rssSlopeMbPerMin as number | null) ?? null)} MB/min, late p99 ${fmt((m.lateP99Ms as number | null) ?? null)} ms` };
  });
  return {
    title: `Soak: ${results.map((r) => r.target).join(', ')}`,
    subtitle: results[0] ? `started ${results[0].startedAt}` : '',
    ...reportHead(meta, null, results.flatMap((r) => bannerFlags(r.target, r.validity.flags))),
    verdicts,
    summary: soakRuleRows(results),
    sections: [...soakSections(results), ...lossSections(results.map(soakLossInput))],
  };
}
