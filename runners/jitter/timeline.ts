import { childRng, uniform } from '../../lib/rng.ts';

/**
 * The seeded drop plan, computed before the run so one seed always yields one timeline:
 * first drop at 5 s + U(0, J) after publishing starts, then every J + U(0, 5) s, while messages
 * are still being published.
 */
export function planDrops(seed: number, clients: number, jitterSec: number, windowMs: number): number[][] {
  const plan: number[][] = [];
  for (let c = 0; c < clients; c++) {
    const times: number[] = [];
    if (jitterSec > 0) {
      const rng = childRng(seed, c);
      let t = 5000 + uniform(rng, 0, jitterSec * 1000);
      // Bounded: at most one drop per 0.5 s of window, whatever the options.
      while (t < windowMs && times.length < windowMs / 500 + 1) {
        times.push(Math.round(t));
        t += jitterSec * 1000 + uniform(rng, 0, 5000);
      }
    }
    plan.push(times);
  }
  return plan;
}

/** One executed disruption, saved with the results. Times are ms since publishing started. */
export interface ChaosEvent {
  client: number;
  kind: 'drop';
  atMs: number;
  /** False when the client had no live socket at the planned time (still reconnecting). */
  applied: boolean;
  reconnectedAtMs?: number;
  resumed?: boolean;
}
