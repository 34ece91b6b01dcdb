import { markdownTable } from '../../engine/pages/markdown.ts';
import { fmtInt, fmtMs as msCell } from '../../engine/pages/charts/common.ts';
import type { AvalancheResult } from './result.ts';

export const fmtMs = (ms: number | null) => (ms === null ? 'never' : msCell(ms));
export const share = (n: number, of: number) => `${fmtInt(n)} (${of ? ((n / of) * 100).toFixed(1) : '0.0'}%)`;
export const valid = (v: { valid: boolean; flags: { code: string }[] }) => (v.valid ? (v.flags.length ? `yes (${v.flags.map((f) => f.code).join(', ')})` : 'yes') : `NO (${v.flags.map((f) => f.code).join(', ')})`);

/** Avalanche comparison, shaped like the benchmark's second table plus the herd and the messages. */
export function formatAvalanche(results: readonly AvalancheResult[]): string {
  return markdownTable(avalancheRows(results), { pad: true }) + '\n';
}

/** The comparison's rows (first row: the header), for the text table and the HTML report's summary. */
export function avalancheRows(results: readonly AvalancheResult[]): string[][] {
  const row = (label: string, f: (r: AvalancheResult) => string) => [label, ...results.map(f)];
  // Quantiles of nobody are not 0 ms.
  const rec = (r: AvalancheResult, ms: number) => (r.recoveryMs.count ? fmtMs(ms) : 'none back');
  const kinds = (r: AvalancheResult) => Object.entries(r.herd.handshakeFailures).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${fmtInt(n)}`).join(', ') || '0';
  return [
    ['', ...results.map((r) => r.target + (r.params.workers > 1 ? ` x${r.params.workers} workers` : r.params.nodes > 1 ? ` x${r.params.nodes} nodes` : '') + (r.front ? ' (front)' : ''))],
    row('Restart', (r) => `${r.restart.mode}${r.params.restartNodes ? ` ${r.params.restartNodes} of ${r.params.nodes}` : ''} (${r.restart.signal ?? r.restart.variant})${r.restart.ok ? '' : ' FAILED'}`),
    row('Clients per node at restart', (r) => (r.front ? r.front.activeAtRestart.join(' / ') : 'n/a')),
    row('Server down', (r) => (r.restart.serverDownMs === null ? 'unknown' : fmtMs(r.restart.serverDownMs))),
    row('Port probes refused', (r) => (r.restart.portProbe ? `${fmtInt(r.restart.portProbe.refused)} of ${fmtInt(r.restart.portProbe.probes)}${r.restart.portProbe.refused ? `, longest ${fmtMs(r.restart.portProbe.longestRefusedMs)}` : ''}` : 'n/a')),
    row('Connections dropped', (r) => share(r.droppedConnections, r.initiallyConnected)),
    row('Recovery p50', (r) => rec(r, r.recoveryMs.p50)),
    row('Recovery p95', (r) => rec(r, r.recoveryMs.p95)),
    row('Recovery p99', (r) => rec(r, r.recoveryMs.p99)),
    row('Recovery max', (r) => rec(r, r.recoveryMs.max)),
    row('  p95 from listening again', (r) => (r.recoveryFromListeningMs ? rec(r, r.recoveryFromListeningMs.p95) : 'unknown')),
    row('Never came back', (r) => share(r.neverReconnected, r.droppedConnections)),
    row('Total downtime', (r) => fmtMs(r.downtimeMs) + (r.downtimeOpenEnded ? '+' : '')),
    row('Time to 95% back', (r) => fmtMs(r.herd.timeToReconnectedMs.p95)),
    row('Peak reconnects/s', (r) => fmtInt(r.herd.peakReconnectRatePerSec)),
    row('Attempts/client mean, max', (r) => (r.herd.attemptsPerClient.observed ? `${r.herd.attemptsPerClient.mean}, ${r.herd.attemptsPerClient.max}` : 'n/a')),
    row('Handshake failures', kinds),
    row('Connect latency p95', (r) => (r.herd.connectLatencyMs.count ? fmtMs(r.herd.connectLatencyMs.p95) : 'n/a')),
    // The two indented rows add up to the total: a refused message that arrived anyway is not lost
    // (counting it made 300 + 840 read 1,139), it has its own row.
    row('Deliveries lost', (r) => fmtInt(r.lostDeliveries)),
    row('  refused while down', (r) => fmtInt(r.lostUnpublishedDeliveries - (r.unacceptedDeliveries ?? 0))),
    row('  accepted, not delivered', (r) => fmtInt(r.lostAcceptedDeliveries)),
    ...(results.some((r) => (r.unacceptedDeliveries ?? 0) > 0) ? [row('Refused, delivered anyway', (r) => fmtInt(r.unacceptedDeliveries ?? 0))] : []),
    row('Delivery rate', (r) => `${r.deliveryRatePct}%`),
    row('Delivery rate of accepted', (r) => `${r.deliveryRateOfAcceptedPct}%`),
    row('Duplicates', (r) => fmtInt(r.duplicates)),
    row('Out of order', (r) => fmtInt(r.outOfOrder)),
    row('Resumed sessions', (r) => fmtInt(r.resumedReconnects)),
    row('History not found', (r) => (r.historyNotFound === null ? 'n/a' : fmtInt(r.historyNotFound))),
    row('Valid', (r) => valid(r.validity)),
  ];
}

/** A failed restart's line, the way every CLI prints a coded error (the result is still written). */
export const restartFailureLine = (r: Pick<AvalancheResult, 'restart'>) => (r.restart.ok ? undefined : `error ${r.restart.code ?? 'RR_ERR_RESTART_FAILED'}: ${r.restart.error}\n`);
