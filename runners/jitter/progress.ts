import type { JitterProgress } from './run.ts';

/**
 * One progress line for stderr while publishing, e.g.
 * `[replay] published 40/60 (0 failed), connected 498/500, delivered 99.87%, drops 120, loop lag p99 3 ms (max 12 ms)`.
 */
export function formatProgress(label: string, p: JitterProgress): string {
  const failed = p.publishFailures ? `, ${p.publishFailures} NOT ACCEPTED` : '';
  return `[${label}] published ${p.published}/${p.planned}${failed}, connected ${p.connected}/${p.clients}, delivered ${p.deliveredPct}%, drops ${p.drops}, loop lag p99 ${p.loopLagMs.p99} ms (max ${p.loopLagMs.max} ms)\n`;
}
