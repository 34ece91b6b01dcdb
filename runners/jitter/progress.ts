import type { Progress } from '../../engine/session/events.ts';

/** A snapshot emitted every 2 s (the publish phase's default) while publishing (the engine's Progress, loop lag always watched). */
export type JitterProgress = Progress & { loopLagMs: { p99: number; max: number } };

/**
 * One progress line for stderr while publishing, e.g.
 * `[replay] published 40/60, connected 498/500, delivered 99.87%, drops 120, loop lag p99 3 ms (max 12 ms)`.
 */
export function formatProgress(label: string, p: JitterProgress): string {
  const failed = p.publishFailures ? `, ${p.publishFailures} NOT ACCEPTED` : '';
  return `[${label}] published ${p.published}/${p.planned}${failed}, connected ${p.connected}/${p.clients}, delivered ${p.deliveredPct}%, drops ${p.drops}, loop lag p99 ${p.loopLagMs.p99} ms (max ${p.loopLagMs.max} ms)\n`;
}
