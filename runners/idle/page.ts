import type { IdleResult } from './result.ts';
import { barChart } from '../../engine/pages/charts/bars.ts';
import { alignTables, round } from '../../engine/pages/charts/common.ts';
import { resourceCharts } from '../../engine/pages/charts/resources.ts';
import type { ChartSpec, ReportMeta, ReportModel, Section } from '../../engine/pages/types.ts';
import { bannerFlags, reportHead } from '../../engine/pages/validity.ts';

const mb = (b: number | null) => (b === null ? 'n/a' : `${(b / 1048576).toFixed(1)} MB`);
const num = (v: number | null | undefined) => (v === null || v === undefined ? 'n/a' : v.toLocaleString('en-US'));

/** Connected and subscribed clients per second from the runner's side, the target's own count beside them. */
function clientsChart(r: IdleResult): ChartSpec | null {
  const own = r.clientSeries ?? [];
  const target = r.targetMetrics.series.filter((p) => p[3] !== null && p[3] !== undefined);
  if (own.length === 0 && target.length === 0) return null;
  const col = (k: number) => ({ x: own.map((p) => round(p[0]! / 1000)), y: own.map((p) => p[k] ?? null) });
  const tables = own.length ? [col(1), col(2), col(4), col(3)] : [];
  if (target.length) tables.push({ x: target.map((p) => round(p[0]! / 1000)), y: target.map((p) => p[3] ?? null) });
  const t = alignTables(tables);
  const labels = own.length ? [['connected', '#0072B2'], ['subscribed', '#009E73'], ['open', '#56B4E9'], ['failed', '#D55E00']] : [];
  if (target.length) labels.push([`target's count (${r.targetMetrics.source})`, '#999999']);
  return {
    id: 'idle-clients',
    title: 'Clients connected and subscribed over time',
    note: `Ramp at ${r.params.ramp}/s, then a ${r.params.hold} s hold. Subscribed should reach ${r.clients.toLocaleString('en-US')} and stay flat through the hold; a falling line is the target dropping idle connections.`,
    xLabel: 'seconds since the ramp began',
    yLabel: 'clients',
    x: t.x,
    series: labels.map(([label, color], i) => ({ label: label!, values: t.ys[i]!, color: color!, width: 2, spanGaps: true, reduce: 'min' as const })),
  };
}

/** The idle-capacity report: how many connections the target held, and what each one cost it. */
export function idleReport(results: readonly IdleResult[], meta: ReportMeta): ReportModel {
  const r = results[0]!;
  const tm = r.targetMetrics;
  const samples = tm.series.filter((p) => typeof p[1] === 'number' && typeof p[2] === 'number');
  const resources = resourceCharts(samples.length ? [{ label: r.target, tSec: samples.map((p) => p[0]! / 1000), rssMb: samples.map((p) => round(p[1]! / 1048576, 1)), cpuPct: samples.map((p) => p[2]!) }] : [], 'seconds since the ramp began');
  const clients = clientsChart(r);
  const perConn = barChart({
    id: 'idle-bytes-per-connection',
    title: 'Memory per connection',
    note: "Target: (peak RSS − baseline) / subscribed. Runner: the same over the runner's worker processes, so the runner's share is never billed to the target.",
    yLabel: 'KB per connection',
    items: [
      { label: `target (${r.target})`, value: tm.bytesPerConnection === null ? null : round(tm.bytesPerConnection / 1024, 2) },
      { label: 'runner', value: r.runner.rssPerClientBytes === null ? null : round(r.runner.rssPerClientBytes / 1024, 2), color: '#999999' },
    ],
  });
  const failures = barChart({ id: 'idle-failures', title: 'Failures by cause', note: "fd_limit and port_exhaustion are the runner's own limits; timeout and target are the target's side.", yLabel: 'clients', items: Object.entries(r.failureCauses).map(([label, value]) => ({ label, value })) });
  const drops = barChart({ id: 'idle-hold-disconnects', title: 'Disconnects during the hold, by reason', note: 'Connections the target closed while every client sat idle.', yLabel: 'clients', items: Object.entries(r.disconnectedDuringHold).map(([label, value]) => ({ label, value })) });
  const section: Section = {
    title: 'Connections and their cost',
    charts: [clients, ...resources, perConn, failures, drops].filter((c): c is ChartSpec => c !== null),
    omitted: [
      ...(clients ? [] : ['Clients over time: this result has no per-second series (written before reports existed).']),
      ...(resources.length ? [] : ['Target memory and CPU: the target was not sampled (no local process and no /metrics).']),
      ...(perConn ? [] : ['Memory per connection: no connection subscribed, or memory was not sampled.']),
      ...(failures ? [] : ['Failures by cause: no client failed.']),
      ...(drops ? [] : ['Disconnects during the hold: none.']),
    ],
  };
  const full = r.subscribed === r.clients;
  return {
    title: `Idle run: ${r.target}, ${r.clients.toLocaleString('en-US')} connections`,
    subtitle: `${r.runner.workers} worker process(es), ramp ${r.params.ramp}/s, hold ${r.params.hold} s, started ${r.startedAt}${r.aborted ? ' (aborted)' : ''}`,
    ...reportHead(meta, null, bannerFlags(r.target, r.validity.flags)),
    verdicts: [{ target: r.target, level: full && r.openAtEndOfHold === r.clients ? 'good' : 'lost', words: full ? (r.openAtEndOfHold === r.clients ? 'Held every connection' : 'Dropped connections during the hold') : 'Not every client subscribed', detail: `${num(r.subscribed)} of ${num(r.clients)} subscribed, ${num(r.openAtEndOfHold)} open at the end of the hold` }],
    summary: [
      ['figure', 'value'],
      ['clients', num(r.clients)],
      ['connected / welcomed / subscribed', `${num(r.connected)} / ${num(r.welcomed)} / ${num(r.subscribed)}`],
      ['failed', num(r.failed)],
      ['open at end of hold', num(r.openAtEndOfHold)],
      ['time to all subscribed', r.timeToAllSubscribedMs === null ? 'n/a' : `${r.timeToAllSubscribedMs} ms`],
      ['target peak RSS (baseline)', `${mb(tm.peakRssBytes)} (${mb(tm.baselineRssBytes)})`],
      ['target bytes per connection', num(tm.bytesPerConnection)],
      ['target CPU peak / avg', `${tm.peakCpuPct ?? 'n/a'} / ${tm.avgCpuPct ?? 'n/a'} %`],
      ['runner bytes per client', num(r.runner.rssPerClientBytes)],
      ['runner loop lag p99', `${r.runner.loopLagP99Ms} ms`],
    ],
    sections: [section],
  };
}
