import type { RunSeries } from '../measure/timeseries.ts';
import type { ValidityFlag } from '../measure/validity.ts';
import type { RunFields } from '../session/results.ts';
import { barChart } from './charts/bars.ts';
import { fmtInt } from './charts/common.ts';
import { latencyCdfCharts } from './charts/latency.ts';
import { lossInputOf, lossSections } from './loss.ts';
import { connectedChart, deliveriesChart } from './charts/timeline.ts';
import type { ChartSpec, ReportMeta, ReportModel, Section } from './types.ts';
import { bannerFlags, reportHead } from './validity.ts';
import { verdicts } from './verdict.ts';

/** What the latency, throughput and whispers results share: a ledger's counts and one exact histogram. */
export type DeliveryRun = Pick<RunFields, 'target' | 'startedAt' | 'clients' | 'expectedDeliveries' | 'receivedDeliveries' | 'lostDeliveries' | 'duplicates' | 'outOfOrder' | 'latencyHistogram' | 'latencyRawMs' | 'latencyOverMinMs'> & {
  test: string;
  validity: { flags: readonly ValidityFlag[] };
  series?: RunSeries;
  aborted?: boolean;
};

function deliveryChart(r: DeliveryRun): ChartSpec | null {
  return barChart({
    id: 'delivery',
    title: 'Delivery ledger',
    note: 'Every (client, message) pair the run expected, and what the ledger saw. Lost, duplicate and out-of-order should all be zero.',
    yLabel: 'deliveries',
    items: [
      { label: 'expected', value: r.expectedDeliveries, color: '#999999' },
      { label: 'received', value: r.receivedDeliveries, color: '#009E73' },
      { label: 'lost', value: r.lostDeliveries, color: '#c62828' },
      { label: 'duplicates', value: r.duplicates, color: '#E69F00' },
      { label: 'out of order', value: r.outOfOrder, color: '#CC79A7' },
    ],
  });
}

/**
 * One page for the delivery runners (latency, throughput, whispers: each runner's page.ts adds its
 * title and extra rows): latency CDFs (raw and min-normalised), the ledger, a timeline when the result has one.
 */
export function deliveryReport(r: DeliveryRun, meta: ReportMeta, o: { title: string; subtitle: string; seed: number | null; extraRows?: string[][]; extraCharts?: ChartSpec[] }): ReportModel {
  const latency = latencyCdfCharts([{ label: r.target, latency: r.latencyHistogram }]);
  const delivery = deliveryChart(r);
  const timeline = r.series ? [connectedChart({ label: r.target, clients: r.clients, series: r.series, events: [] }), deliveriesChart({ label: r.target, clients: r.clients, series: r.series, events: [] })] : [];
  const section: Section = {
    title: 'Latency and delivery',
    charts: [...latency, ...(delivery ? [delivery] : []), ...(o.extraCharts ?? []), ...timeline],
    omitted: [...(latency.length ? [] : ['Latency CDFs: no delivery was recorded.']), ...(r.series || r.test !== 'latency' ? [] : ['Timeline: this result has no per-second series.'])],
  };
  const lat = r.latencyRawMs;
  return {
    title: o.title,
    subtitle: `${o.subtitle}, started ${r.startedAt}${r.aborted ? ' (aborted)' : ''}`,
    ...reportHead(meta, o.seed, bannerFlags(r.target, r.validity.flags)),
    verdicts: verdicts([{ target: r.target, lostDeliveries: r.lostDeliveries, expectedDeliveries: r.expectedDeliveries, unrecovered: 0, recoveryP95Ms: null }]),
    summary: [
      ['figure', 'value'],
      ['deliveries received / expected', `${fmtInt(r.receivedDeliveries)} / ${fmtInt(r.expectedDeliveries)}`],
      ['lost / duplicates / out of order', `${fmtInt(r.lostDeliveries)} / ${fmtInt(r.duplicates)} / ${fmtInt(r.outOfOrder)}`],
      ['latency raw p50 / p95 / p99 / max', `${lat.p50} / ${lat.p95} / ${lat.p99} / ${lat.max} ms`],
      ['latency over min p50 / p95 / p99', `${r.latencyOverMinMs.p50} / ${r.latencyOverMinMs.p95} / ${r.latencyOverMinMs.p99} ms`],
      ...(o.extraRows ?? []),
    ],
    // Lost by cause and resume outcomes when the result carries them (the shared engine's runners do).
    sections: [section, ...lossSections([lossInputOf(r.target, r)])],
  };
}
