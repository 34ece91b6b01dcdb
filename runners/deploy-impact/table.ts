import { markdownTable } from '../../engine/pages/markdown.ts';
import { fmtInt } from '../../engine/pages/charts/common.ts';
import { fmtMs, share, valid } from '../avalanche/table.ts';
import type { DeployImpactResult } from './result.ts';

export function formatDeployImpact(results: readonly DeployImpactResult[]): string {
  return markdownTable(deployImpactRows(results), { pad: true }) + '\n';
}

export function deployImpactRows(results: readonly DeployImpactResult[]): string[][] {
  const row = (label: string, f: (r: DeployImpactResult) => string) => [label, ...results.map(f)];
  return [
    ['', ...results.map((r) => r.target)],
    row('Connections dropped', (r) => share(r.droppedConnections, r.initiallyConnected)),
    row('Publishing resumed after', (r) => fmtMs(r.publisher.downtimeMs)),
    row('  of which process start', (r) => fmtMs(r.publisher.processStartMs)),
    row("Publisher's gap (messages)", (r) => fmtInt(r.publisher.gapMessages)),
    row('Client-side gap p50 / max', (r) => `${fmtMs(r.deliveryGapMs.p50)} / ${fmtMs(r.deliveryGapMs.max)}`),
    row('Deliveries lost by server', (r) => fmtInt(r.lostDeliveries)),
    row('Delivery rate (accepted)', (r) => `${r.deliveryRatePct}%`),
    row('Duplicates', (r) => fmtInt(r.duplicates)),
    row('Valid', (r) => valid(r.validity)),
  ];
}
