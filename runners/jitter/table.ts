import { LOSS_CAUSE_LABELS } from '../../engine/measure/loss-causes.ts';
import { causeCell, causesIn } from '../../engine/pages/loss.ts';
import { fmtInt, fmtMs } from '../../engine/pages/charts/common.ts';
import { markdownTable } from '../../engine/pages/markdown.ts';
import type { JitterResult } from './result.ts';
import type { ConditionResult } from './weather.ts';

/** A result's column: the target, plus `(tuned)` when its client ran the shared tuned backoff. */
export function columnLabel(r: Pick<JitterResult, 'target'> & { params: Pick<JitterResult['params'], 'reconnectStrategy'> }): string {
  return r.params.reconnectStrategy === 'tuned' ? `${r.target} (tuned)` : r.target;
}

/** Rows of the comparison table, shaped like the benchmark's first table. */
export function comparisonRows(results: readonly JitterResult[]): string[][] {
  const row = (label: string, f: (r: JitterResult) => string) => [label, ...results.map(f)];
  return [
    ['', ...results.map(columnLabel)],
    // Clients still offline when the settle ended: their share is "not back by the end", not loss while connected.
    row('Deliveries lost', (r) => fmtInt(r.lostDeliveries) + (r.offlineAtEnd?.clients ? ` (${fmtInt(r.offlineAtEnd.lostDeliveries)} not back by the end: ${fmtInt(r.offlineAtEnd.clients)} clients still offline)` : '')),
    ...lossRows(results),
    row('Delivery rate', (r) => `${r.deliveryRatePct}%`),
    row('Messages accepted', (r) => `${fmtInt(r.published)} of ${fmtInt(r.totalMessages)}${r.publishFailures ? ` (not accepted: ${Object.entries(r.publishFailureCauses).map(([c, n]) => `${c} x${n}`).join(', ')})` : ''}`),
    row('Resume rate', (r) => (r.csrResumeRatePct === null ? 'n/a' : `${r.csrResumeRatePct}%`)),
    row('Duplicates', (r) => fmtInt(r.duplicates)),
    row('Out of order', (r) => fmtInt(r.outOfOrder)),
    // Every first delivery, live and replayed alike (the benchmark calls these "Replay": wrong for
    // targets that have no replay, and not replay-only for those that do).
    row('Latency p50 (raw)', (r) => fmtMs(r.latencyRawMs.p50)),
    row('Latency p95', (r) => fmtMs(r.latencyRawMs.p95)),
    row('Latency p99', (r) => fmtMs(r.latencyRawMs.p99)),
    row('Latency max', (r) => fmtMs(r.latencyRawMs.max)),
    row('Jitter events', (r) => fmtInt(r.jitterEvents)),
    row('Connect failures', (r) => fmtInt(r.connectFailures)),
    ...chaosRows(results),
    row('Runner peak RSS', (r) => `${r.runnerPeakRssMb} MB`),
    row('Valid', (r) => (r.validity.valid ? (r.validity.flags.length ? 'yes (warnings)' : 'yes') : 'NO')),
  ];
}

/**
 * "Lost by cause": one row per cause that occurred in any column (count and share of that
 * column's loss), then the reconnects' resume outcomes. Results written before causes existed say n/a.
 */
function lossRows(results: readonly JitterResult[]): string[][] {
  const rows = causesIn(results).map((c) => [`Lost: ${LOSS_CAUSE_LABELS[c]}`, ...results.map((r) => causeCell(r, c))]);
  if (results.some((r) => r.resumeOutcomes && Object.keys(r.resumeOutcomes).length > 0))
    rows.push(['Resume outcomes', ...results.map((r) => (r.resumeOutcomes ? counts(r.resumeOutcomes) || 'no reconnects' : 'n/a'))]);
  if (results.some((r) => r.lateDeliveries && r.lateDeliveries.late > 0))
    rows.push(['Late (over live p99)', ...results.map((r) => (r.lateDeliveries ? lateCell(r.lateDeliveries) : 'n/a'))]);
  return rows;
}

const counts = (m: Record<string, number>) => Object.entries(m).map(([k, n]) => `${k.replace(/_/g, ' ')} x${fmtInt(n)}`).join(', ');

function lateCell(l: NonNullable<JitterResult['lateDeliveries']>): string {
  return l.late === 0 ? '0' : `${fmtInt(l.late)} over ${fmtMs(l.liveP99Ms ?? 0)}: ${counts(l.byPath)}`;
}

/** Per disruption kind: how fast clients noticed and came back (drops are noticed at once: we cause them). */
function chaosRows(results: readonly JitterResult[]): string[][] {
  const kinds = [...new Set(results.flatMap((r) => r.chaos.disruptions.map((d) => d.kind)))];
  return kinds.flatMap((kind) => {
    const cell = (r: JitterResult, f: (d: JitterResult['chaos']['disruptions'][number]) => string) => {
      const d = r.chaos.disruptions.find((x) => x.kind === kind);
      return d ? f(d) : 'n/a';
    };
    const rows = [
      [`${kind}: recover p50 / p95`, ...results.map((r) => cell(r, (d) => (d.recoverMs.count ? `${fmtMs(d.recoverMs.p50)} / ${fmtMs(d.recoverMs.p95)}` : 'none')))],
      [`${kind}: not back by the end`, ...results.map((r) => cell(r, (d) => `${d.unrecovered} of ${d.detectMs.count}`))],
    ];
    if (kind !== 'drop') {
      rows.unshift([`${kind}: detect p50 / p95`, ...results.map((r) => cell(r, (d) => (d.detectMs.count ? `${fmtMs(d.detectMs.p50)} / ${fmtMs(d.detectMs.p95)}` : 'never')))]);
      rows.push([`${kind}: kept connection`, ...results.map((r) => cell(r, (d) => `${d.undetected} of ${d.affectedClients}`))]);
    }
    return rows;
  });
}

/**
 * Network weather: one row per target x condition, over that condition's clients only: delivery,
 * loss by cause (each cause that occurred anywhere), resume outcomes, latency raw and over the
 * condition's own minimum, and how fast its outages were recovered from.
 */
export function weatherRows(results: readonly JitterResult[]): string[][] {
  const rows = results.flatMap((r) => (r.weather?.conditions ?? []).map((c) => ({ r, c })));
  if (rows.length === 0) return [];
  const causes = causesIn(rows.map((x) => x.c));
  const outages = (c: ConditionResult) => c.disruptions.filter((d) => d.kind !== 'link');
  return [
    ['Target', 'Condition', 'Clients', 'Delivery', 'Lost', ...causes.map((k) => `Lost: ${LOSS_CAUSE_LABELS[k]}`), 'Resume outcomes', 'Latency p50 / p95 (raw)', 'p50 / p95 over min', 'Outages: recover p50 / p95', 'Not back by the end'],
    ...rows.map(({ r, c }) => {
      const out = outages(c);
      const rec = out.filter((d) => d.recoverMs.count > 0);
      return [
        columnLabel(r),
        `${c.condition} (${c.share}%)`,
        fmtInt(c.clients),
        `${c.deliveryRatePct}%`,
        fmtInt(c.lostDeliveries),
        ...causes.map((k) => causeCell(c, k)),
        c.resumeOutcomes ? counts(c.resumeOutcomes) || 'no reconnects' : 'n/a',
        `${fmtMs(c.latencyRawMs.p50)} / ${fmtMs(c.latencyRawMs.p95)}`,
        `${fmtMs(c.latencyOverMinMs.p50)} / ${fmtMs(c.latencyOverMinMs.p95)}`,
        // Per outage kind (a condition has one: tunnels, handovers, a sleep, a deploy); none for link-only weather.
        rec.length ? rec.map((d) => `${d.kind} ${fmtMs(d.recoverMs.p50)} / ${fmtMs(d.recoverMs.p95)}`).join('; ') : out.length ? 'none recovered' : 'no outages',
        out.length ? out.map((d) => `${d.unrecovered} of ${d.detectMs.count}`).join('; ') : '-',
      ];
    }),
  ];
}

export function formatComparison(results: readonly JitterResult[]): string {
  const flags = results.flatMap((r) => r.validity.flags.map((f) => `  [${f.severity}] ${columnLabel(r)}: ${f.code}: ${f.message}`));
  const weather = weatherRows(results);
  return markdownTable(comparisonRows(results), { pad: true }) + (weather.length ? `\n\nBy weather condition (${results.find((r) => r.weather)!.weather!.spec}):\n\n${markdownTable(weather, { pad: true })}` : '') + (flags.length ? '\n\nValidity:\n' + flags.join('\n') : '') + '\n';
}
