import { barChart } from '../../engine/pages/charts/bars.ts';
import { fmtInt } from '../../engine/pages/charts/common.ts';
import { deliveryReport } from '../../engine/pages/delivery.ts';
import type { ReportMeta, ReportModel } from '../../engine/pages/types.ts';
import type { ThroughputResult } from './result.ts';

export function throughputReport(results: readonly ThroughputResult[], meta: ReportMeta): ReportModel {
  const r = results[0]!;
  const rates = barChart({
    id: 'throughput-rates',
    title: 'Delivery rates',
    note: 'Outbound: what the target had to deliver per second of publishing; useful: what arrived; end to end: arrivals over first send to last arrival. Useful well under outbound is the target falling behind.',
    yLabel: 'deliveries per second',
    items: [
      { label: 'outbound', value: r.outboundDeliveriesPerSec, color: '#999999' },
      { label: 'useful', value: r.usefulDeliveriesPerSec, color: '#009E73' },
      { label: 'end to end', value: r.deliveriesPerSecEndToEnd, color: '#0072B2' },
    ],
  });
  return deliveryReport(r, meta, {
    title: `Throughput run: ${r.target}`,
    subtitle: `${fmtInt(r.clients)} clients, ${r.totalMessages} messages every ${r.intervalMs} ms`,
    seed: null,
    extraRows: [['deliveries/s outbound / useful / end to end', `${fmtInt(r.outboundDeliveriesPerSec)} / ${fmtInt(r.usefulDeliveriesPerSec)} / ${fmtInt(r.deliveriesPerSecEndToEnd)}`], ['publish failures', fmtInt(r.publishFailures)]],
    extraCharts: rates ? [rates] : [],
  });
}
