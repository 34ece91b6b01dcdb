import { herdChart, type HerdInput } from '../../engine/pages/charts/herd.ts';
import { latencyCdfCharts } from '../../engine/pages/charts/latency.ts';
import { lossInputOf, lossSections } from '../../engine/pages/loss.ts';
import type { ReportMeta, ReportModel } from '../../engine/pages/types.ts';
import { bannerFlags, reportHead } from '../../engine/pages/validity.ts';
import { verdicts } from '../../engine/pages/verdict.ts';
import { avalancheRows } from './table.ts';
import type { AvalancheResult } from './result.ts';

/** The herd chart's input from a result: counts of the clients connected at the restart, back at each sample. */
export function herdInput(r: AvalancheResult): HerdInput {
  const pts = r.herd.series.filter((p) => p.tMs >= 0);
  const last = r.restart.nodes.map((n) => n.listeningAt).filter((t): t is number => t !== null);
  return {
    label: r.target,
    clients: r.initiallyConnected,
    tMs: pts.map((p) => p.tMs),
    reconnected: pts.map((p) => Math.round((p.reconnectedPct / 100) * r.initiallyConnected)),
    ...(last.length ? { serverUpAtMs: Math.max(...last) - r.restart.startedAtMs } : {}),
  };
}

/** HTML report model for avalanche results (one target or `bench:avalanche-all` side by side). */
export function avalancheReport(results: readonly AvalancheResult[], meta: ReportMeta): ReportModel {
  const first = results[0]!;
  const herd = herdChart(results.map(herdInput));
  const latency = latencyCdfCharts(results.map((r) => ({ label: r.target, latency: r.latencyHistogram })));
  const connect = latencyCdfCharts(results.map((r) => ({ label: r.target, latency: r.herd.connectLatencyMs.histogram })), 'connect-latency');
  return {
    title: results.length > 1 ? `Avalanche comparison, --restart ${first.restart.mode}` : `Avalanche: ${first.target}, --restart ${first.restart.mode}`,
    subtitle: `${first.clients.toLocaleString('en-US')} clients, ${first.params.rate} msg/s, restart after ${first.params.warmupMs} ms, started ${first.startedAt}`,
    ...reportHead(meta, first.seed, results.flatMap((r) => bannerFlags(r.target, r.validity.flags))),
    verdicts: verdicts(results.map((r) => ({ target: r.target, lostDeliveries: r.lostDeliveries, expectedDeliveries: r.expectedDeliveries, unrecovered: r.neverReconnected, recoveryP95Ms: r.droppedConnections ? r.recoveryMs.p95 : null }))),
    summary: avalancheRows(results),
    sections: [
      {
        title: 'The herd',
        intro: 'Share of the clients connected at the restart that are connected again, from the moment the runner began the restart.',
        charts: herd ? [herd] : [],
        omitted: herd ? [] : ['Herd: no client was connected at the restart.'],
      },
      {
        title: 'Latency',
        intro: 'Delivery latency over the whole run, then connect latency (attempt to subscribed) during the herd.',
        // Connect latency has no clock offset to cancel: the raw CDF only, with its own words.
        charts: [...latency, ...connect.slice(0, 1).map((c) => ({ ...c, title: 'Connect latency during the herd, CDF', note: 'From a connect attempt to connected and subscribed, for the attempts made after the restart began (failed attempts excluded).', yLabel: '% of successful attempts at or below' }))],
        omitted: latency.length ? [] : ['Latency: no delivery was recorded.'],
      },
      // Lost by cause and resume outcomes per target (one stacked bar per target side by side), when the results carry them.
      ...lossSections(results.map((r) => lossInputOf(r.target, r))),
    ],
  };
}
