import { mergeChildReports } from '../../../engine/targets/user-module.ts';
import * as hdr from 'hdr-histogram-js';
import { mergeLatency, type EncodedLatency } from '../../../engine/measure/latency.ts';
import { addTotals } from '../../../engine/measure/ledger.ts';
import { addMaps, sum } from '../../../engine/session/results.ts';
import type { LoaderReady, LoaderStep } from './messages.ts';

/**
 * Merging loader processes exactly: ledger totals are sums (every loader's ledgers cover disjoint
 * connections), latency is one HdrHistogram merged from the loaders' encoded ones (mergeLatency),
 * so a merged p99 is the p99 of every delivery, never the worst loader's p99 (seeds/000's weakness).
 */
export function mergeSteps(parts: readonly LoaderStep[]) {
  return {
    totals: addTotals(parts.map((p) => p.totals)),
    latency: mergeLatency(parts.map((p) => p.latency)),
    open: sum(parts, (p) => p.open),
    disconnects: addMaps(parts.map((p) => p.disconnects)),
    /** A target file's faults over every loader (a report that is not one this tree writes is left out). */
    targetModule: mergeChildReports(parts.map((p) => p.targetModule)),
    /** Per loader: what the rig rules look at. */
    loaders: [...parts].sort((a, b) => a.loader - b.loader).map((p) => ({ loader: p.loader, loopLagP99Ms: p.health.runnerLoopLagMs.p99, loopLagMaxMs: p.health.runnerLoopLagMs.max, cpuPct: p.cpuPct, peakRssMb: p.health.runnerPeakRssMb })),
  };
}

export type MergedStep = ReturnType<typeof mergeSteps>;

export function mergeReady(parts: readonly LoaderReady[]) {
  return { requested: sum(parts, (p) => p.requested), subscribed: sum(parts, (p) => p.subscribed), failed: sum(parts, (p) => p.failed), failureCauses: addMaps(parts.map((p) => p.failureCauses)), rigLimitFailures: sum(parts, (p) => p.rigLimitFailures), connectMs: Math.max(0, ...parts.map((p) => p.ms)) };
}
export type MergedReady = ReturnType<typeof mergeReady>;

/** Percentiles in ms from an encoded histogram (p99.9 too, which LatencyReport does not carry), clamped into the exact [min, max]. */
export function percentilesMs(enc: EncodedLatency, ps: readonly number[]): number[] {
  if (enc.count === 0) return ps.map(() => 0);
  const h = hdr.decodeFromCompressedBase64(enc.histogram);
  return ps.map((p) => Math.min(enc.maxUs, Math.max(enc.minUs, h.getValueAtPercentile(p))) / 1000);
}
