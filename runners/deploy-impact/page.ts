import { latencyCdfCharts } from '../../engine/pages/charts/latency.ts';
import { lossInputOf, lossSections } from '../../engine/pages/loss.ts';
import type { ReportMeta, ReportModel } from '../../engine/pages/types.ts';
import { bannerFlags, reportHead } from '../../engine/pages/validity.ts';
import { verdicts } from '../../engine/pages/verdict.ts';
import type { DeployImpactResult } from './result.ts';
import { deployImpactRows } from './table.ts';

/** HTML report model for deploy-impact results. */
export function deployImpactReport(results: readonly DeployImpactResult[], meta: ReportMeta): ReportModel {
  const first = results[0]!;
  return {
    title: results.length > 1 ? 'Deploy impact comparison' : `Deploy impact: ${first.target}`,
    subtitle: `${first.clients.toLocaleString('en-US')} clients, ${first.params.rate} msg/s, publisher ${first.publisher.signal} after ${first.params.warmupMs} ms, started ${first.startedAt}`,
    ...reportHead(meta, first.seed, results.flatMap((r) => bannerFlags(r.target, r.validity.flags))),
    verdicts: verdicts(results.map((r) => ({ target: r.target, lostDeliveries: r.lostDeliveries, expectedDeliveries: r.expectedDeliveries, unrecovered: r.neverReconnected, recoveryP95Ms: null }))),
    summary: deployImpactRows(results),
    sections: [{ title: 'Latency', charts: latencyCdfCharts(results.map((r) => ({ label: r.target, latency: r.latencyHistogram }))), omitted: [] }, ...lossSections(results.map((r) => lossInputOf(r.target, r)))],
  };
}
