import * as hdr from 'hdr-histogram-js';
import { mergeLatency, type EncodedLatency } from '../../core/latency.ts';
import type { LedgerTotals } from '../../core/ledger.ts';
import { addMaps } from '../../engine/results.ts';
import type { LoaderReady, LoaderStep } from './messages.ts';

/**
 * Merging loader processes exactly: ledger totals are sums (every loader's ledgers cover disjoint
 * connections), latency is one HdrHistogram merged from the loaders' encoded ones (mergeLatency),
 * so a merged p99 is the p99 of every delivery, never the worst loader's p99 (seeds/000's weakness).
 */
export function addTotals(parts: readonly LedgerTotals[]): LedgerTotals {
  const out: LedgerTotals = { expectedDeliveries: 0, receivedDeliveries: 0, lostDeliveries: 0, unacceptedDeliveries: 0, unconfirmedDeliveries: 0, duplicates: 0, outOfOrder: 0, foreign: 0, perfectClients: 0 };
  for (const p of parts) for (const k of Object.keys(out) as (keyof LedgerTotals)[]) out[k] += p[k];
  return out;
}

export interface MergedStep {
  totals: LedgerTotals;
  latency: EncodedLatency;
  open: number;
  disconnects: Record<string, number>;
  /** Per loader: what the rig rules look at. */
  loaders: { loader: number; loopLagP99Ms: number; loopLagMaxMs: number; cpuPct: number; peakRssMb: number }[];
}

export function mergeSteps(parts: readonly LoaderStep[]): MergedStep {
  return {
    totals: addTotals(parts.map((p) => p.totals)),
    latency: mergeLatency(parts.map((p) => p.latency)),
    open: parts.reduce((a, p) => a + p.open, 0),
    disconnects: addMaps(parts.map((p) => p.disconnects)),
    loaders: [...parts].sort((a, b) => a.loader - b.loader).map((p) => ({ loader: p.loader, loopLagP99Ms: p.health.runnerLoopLagMs.p99, loopLagMaxMs: p.health.runnerLoopLagMs.max, cpuPct: p.cpuPct, peakRssMb: p.health.runnerPeakRssMb })),
  };
}

export interface MergedReady {
  requested: number;
  subscribed: number;
  failed: number;
  failureCauses: Record<string, number>;
  rigLimitFailures: number;
  connectMs: number;
}

export function mergeReady(parts: readonly LoaderReady[]): MergedReady {
  const sum = (f: (p: LoaderReady) => number) => parts.reduce((a, p) => a + f(p), 0);
  return { requested: sum((p) => p.requested), subscribed: sum((p) => p.subscribed), failed: sum((p) => p.failed), failureCauses: addMaps(parts.map((p) => p.failureCauses)), rigLimitFailures: sum((p) => p.rigLimitFailures), connectMs: Math.max(0, ...parts.map((p) => p.ms)) };
}

/** Percentiles in ms from an encoded histogram (p99.9 too, which LatencyReport does not carry), clamped into the exact [min, max]. */
export function percentilesMs(enc: EncodedLatency, ps: readonly number[]): number[] {
  if (enc.count === 0) return ps.map(() => 0);
  const h = hdr.decodeFromCompressedBase64(enc.histogram);
  return ps.map((p) => Math.min(enc.maxUs, Math.max(enc.minUs, h.getValueAtPercentile(p))) / 1000);
}
