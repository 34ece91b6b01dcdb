import { fmtInt } from '../../engine/pages/charts/common.ts';
import { deliveryReport } from '../../engine/pages/delivery.ts';
import type { ReportMeta, ReportModel } from '../../engine/pages/types.ts';
import type { LatencyResult } from './run.ts';

export function latencyReport(results: readonly LatencyResult[], meta: ReportMeta): ReportModel {
  const r = results[0]!;
  return deliveryReport(r, meta, {
    title: `Latency run: ${r.target}`,
    subtitle: `${fmtInt(r.clients)} clients, ${r.totalMessages} messages`,
    seed: r.seed,
  });
}
