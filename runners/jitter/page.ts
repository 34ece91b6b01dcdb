import { columnLabel, comparisonRows, weatherRows } from './table.ts';
import { CONDITIONS, WEATHER } from '../../chaos/weather/conditions.ts';
import type { JitterResult } from './result.ts';
import { latencyCdfCharts } from '../../engine/pages/charts/latency.ts';
import { lossInputOf, lossSections, lossStack } from '../../engine/pages/loss.ts';
import { recoveryCdfChart, recoveryCurveCharts } from '../../engine/pages/charts/recovery.ts';
import { resourceCharts } from '../../engine/pages/charts/resources.ts';
import { comparisonCharts, connectedChart, deliveriesChart, type TimelineInput } from '../../engine/pages/charts/timeline.ts';
import type { ReportMeta, ReportModel, Section } from '../../engine/pages/types.ts';
import { bannerFlags, reportHead } from '../../engine/pages/validity.ts';
import { verdicts } from '../../engine/pages/verdict.ts';

/**
 * The report for jitter and chaos-plan runs: one target or every target of `npm run bench`
 * side by side. Overview charts overlay the targets in their palette colours; each target then
 * gets its own timeline.
 */
export function jitterReport(results: readonly JitterResult[], meta: ReportMeta): ReportModel {
  const first = results[0]!;
  const many = results.length > 1;
  const plan = first.chaos.plan;
  const p = first.params;
  const timelines: TimelineInput[] = results.filter((r) => r.series).map((r) => ({ label: columnLabel(r), clients: r.clients, series: r.series!, events: r.chaos.timeline }));
  const noSeries = results.filter((r) => !r.series).map((r) => `${columnLabel(r)}: this result has no per-second series (written before reports existed); timeline charts omitted.`);

  const recoveryCdf = recoveryCdfChart(
    results.flatMap((r, index) =>
      r.chaos.disruptions.map((d) => {
        const q = r.series?.recovery.find((x) => x.kind === d.kind);
        return { label: columnLabel(r), index, kind: d.kind, recovered: q?.recovered ?? 0, unrecovered: d.unrecovered, quantilesMs: q?.quantilesMs ?? [] };
      }),
    ).filter((x) => x.quantilesMs.length > 0 || x.unrecovered > 0),
  );
  const curves = recoveryCurveCharts(results.flatMap((r, index) => r.chaos.disruptions.map((d) => ({ label: columnLabel(r), index, kind: d.kind, curve: d.curve }))));
  const latency = latencyCdfCharts(results.map((r) => ({ label: columnLabel(r), latency: r.latencyHistogram })));
  const resources = resourceCharts(results.flatMap((r) => (r.targetResources ? [{ ...r.targetResources, label: columnLabel(r) }] : [])));

  const overview: Section = {
    title: many ? 'Every target side by side' : 'Overview',
    intro: many ? 'Each target has one colour throughout the page. Same seed, same disruption timeline for every target.' : undefined,
    charts: [...comparisonCharts(timelines), ...(recoveryCdf ? [recoveryCdf] : []), ...curves, ...latency, ...resources],
    omitted: [
      ...noSeries,
      ...(recoveryCdf ? [] : ['Recovery time CDF: no client lost its connection to a disruption in this run.']),
      ...(curves.length ? [] : ['Recovery curves: no disruption was applied in this run.']),
      ...(latency.length ? [] : ['Latency CDFs: no delivery was recorded.']),
      ...(resources.length ? [] : ['Target memory and CPU: the target was not started by this runner (--url), so it was not sampled.']),
    ],
  };
  // Lost by cause and resume outcomes: the shared renderer (one target: its bars; several: one stacked bar per target).
  const lossSection = lossSections(results.map((r) => lossInputOf(columnLabel(r), r)));
  const perTarget: Section[] = timelines.map((t) => ({ title: `Timeline: ${t.label}`, charts: [connectedChart(t), deliveriesChart(t)] }));
  const weather = weatherSections(results);

  return {
    title: many ? `Resilience comparison, plan ${plan}` : `Jitter run: ${first.target}, plan ${plan}`,
    subtitle: `${first.clients.toLocaleString('en-US')} clients, ${first.totalMessages} messages every ${p.interval} ms, disruption every ${p.jitter} s (+U(0,5)), started ${first.startedAt}`,
    ...reportHead(meta, first.seed, results.flatMap((r) => bannerFlags(columnLabel(r), r.validity.flags))),
    verdicts: verdicts(
      results.map((r) => {
        const rec = r.chaos.disruptions.filter((d) => d.recoverMs.count > 0).map((d) => d.recoverMs.p95);
        return { target: columnLabel(r), lostDeliveries: r.lostDeliveries, expectedDeliveries: r.expectedDeliveries, unrecovered: r.chaos.disruptions.reduce((n, d) => n + d.unrecovered, 0), recoveryP95Ms: rec.length ? Math.max(...rec) : null, ...(r.offlineAtEnd?.lostDeliveries ? { notBackByEnd: r.offlineAtEnd.lostDeliveries } : {}) };
      }),
    ),
    summary: comparisonRows(results),
    sections: [overview, ...lossSection, ...weather, ...perTarget],
  };
}

/**
 * Network weather: one row of charts per condition, over that condition's clients in every
 * target: latency CDFs (raw and over the condition's own minimum), lost by cause, and the
 * table's rows for that condition.
 */
function weatherSections(results: readonly JitterResult[]): Section[] {
  const rows = weatherRows(results);
  return CONDITIONS.flatMap((name): Section[] => {
    const per = results.flatMap((r) => r.weather?.conditions.filter((c) => c.condition === name).map((c) => ({ label: columnLabel(r), c })) ?? []);
    if (per.length === 0) return [];
    const id = `weather-${name}`;
    const stack = lossStack(per.map(({ label, c }) => lossInputOf(label, c)), `${id}-lost`);
    const latency = latencyCdfCharts(per.map(({ label, c }) => ({ label, latency: c.latencyHistogram })), `${id}-latency`);
    return [
      {
        title: `Weather: ${name} (${per[0]!.c.share}% of clients)`,
        intro: `${WEATHER[name].description}. Figures over this condition's clients only (docs/chaos-plans.md, "Network weather").`,
        charts: latency,
        stacks: stack && per.some(({ c }) => c.lostDeliveries > 0) ? [stack] : [],
        tables: [{ id: `${id}-table`, caption: `${name}: delivery, loss, resume outcomes, latency and recovery per target`, rows: [rows[0]!, ...rows.slice(1).filter((row) => row[1]!.startsWith(`${name} (`))] }],
        omitted: [...(latency.length ? [] : ['Latency CDFs: no delivery reached these clients.']), ...(per.some(({ c }) => c.lostDeliveries > 0) ? [] : ['Lost by cause: these clients lost nothing.'])],
      },
    ];
  });
}
