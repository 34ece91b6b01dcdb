import { parsePlan } from '../../chaos/plans/catalog.ts';
import { round } from '../../engine/pages/charts/common.ts';
import type { JitterResult } from './result.ts';

/**
 * Rebound's proxy vs a real Toxiproxy under one seeded plan (bench/proxy-compare.ts runs them):
 * one row per (plan, proxy, round, target), pairs per round, and each proxy against its own
 * first round. Goal per pair: delivery within 0.5 points, recover p50 within 10 % of Toxiproxy's.
 */

export const GOAL = Object.freeze({ deliveryDiffPtsMax: 0.5, recoverDiffPctMax: 10 });

/** One result's row: the plan's (first network) disruption report. */
export function rowOf(plan: string, proxy: 'rebound' | 'toxiproxy', round: number, r: JitterResult) {
  const kinds: string[] = parsePlan(plan).filter((k) => k !== 'drop');
  const d = r.chaos.disruptions.find((x) => kinds.includes(x.kind)) ?? r.chaos.disruptions[0];
  return {
    plan,
    proxy,
    round,
    target: r.target,
    deliveryRatePct: r.deliveryRatePct,
    lostDeliveries: r.lostDeliveries,
    affectedClients: d?.affectedClients ?? 0,
    detectP50Ms: d?.detectMs.p50 ?? 0,
    recoverP50Ms: d?.recoverMs.p50 ?? 0,
    recoverCount: d?.recoverMs.count ?? 0,
    /** Delivery latency over the whole run, ms: what `flaky` and `slow-consumer` change when nobody disconnects. */
    latencyP50Ms: r.latencyRawMs.p50,
    latencyP95Ms: r.latencyRawMs.p95,
    undetected: d?.undetected ?? 0,
    unrecovered: d?.unrecovered ?? 0,
    valid: r.validity.valid,
  };
}

export type CompareRow = ReturnType<typeof rowOf>;

const relPct = (a: number, ref: number) => (ref === 0 ? (a === 0 ? 0 : Infinity) : round((Math.abs(a - ref) / ref) * 100, 1));
/** `a` against `ref`: the delivery difference in points, the recover p50's as |a − ref| / ref, %. */
const diff = (a: CompareRow, ref: CompareRow) => ({ deliveryDiffPts: round(Math.abs(a.deliveryRatePct - ref.deliveryRatePct), 2), recoverDiffPct: relPct(a.recoverP50Ms, ref.recoverP50Ms) });

/** Rebound vs Toxiproxy in the same round, per plan and target. */
export function comparePairs(rows: readonly CompareRow[]) {
  return rows.filter((r) => r.proxy === 'rebound').flatMap((a) => {
    const b = rows.find((r) => r.proxy === 'toxiproxy' && r.plan === a.plan && r.target === a.target && r.round === a.round);
    if (!b) return [];
    const d = diff(a, b);
    return [{ plan: a.plan, target: a.target, round: a.round, ...d, goalMet: d.deliveryDiffPts <= GOAL.deliveryDiffPtsMax && d.recoverDiffPct <= GOAL.recoverDiffPctMax }];
  });
}

/** One proxy against itself: round r vs round 1, the run-to-run spread the pair difference should be read against. */
export function compareRounds(rows: readonly CompareRow[]) {
  return rows.filter((x) => x.round > 1).flatMap((r) => {
    const first = rows.find((x) => x.round === 1 && x.proxy === r.proxy && x.plan === r.plan && x.target === r.target);
    return first ? [{ plan: r.plan, target: r.target, proxy: r.proxy, round: r.round, ...diff(r, first) }] : [];
  });
}
