import * as hdr from 'hdr-histogram-js';

/** Values are recorded in microseconds; up to one hour, 3 significant digits. */
const HIST_OPTS = { lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 as const };

interface LatencySummary {
  avg: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface LatencyReport {
  /** arrival − sentAt, ms. */
  latencyRawMs: LatencySummary & { min: number; count: number };
  /** arrival − sentAt − skewFloor, ms: the view that cancels a constant clock offset. */
  latencyOverMinMs: LatencySummary & { skewFloor: number };
  skewFloor: number;
}

/** A travelling histogram: exact across shards because every shard records into the same bucket layout. */
export interface EncodedLatency {
  /** hdr-histogram-js compressed base64 of the raw latencies in µs (negatives recorded as 0, see `negatives`). */
  histogram: string;
  /** Exact minimum and maximum raw latency in µs (the histogram rounds; these do not). */
  minUs: number;
  maxUs: number;
  count: number;
  /**
   * Samples below 0 (a subscriber clock behind the publisher's). An HdrHistogram cannot hold
   * them, so they are recorded as 0 and counted here; `minUs` stays exact, so the negative
   * skewFloor (a fatal validity flag) still shows.
   */
  negatives: number;
}

export const newHistogram = () => hdr.build(HIST_OPTS);

/**
 * Latency recorder. Min-normalisation subtracts the global minimum from every sample; because
 * that is a constant shift, percentiles of the shifted set are percentiles of the raw set minus
 * the minimum, so one histogram serves both views and merges stay exact.
 */
export class LatencyRecorder {
  private readonly hist = newHistogram();
  private minUs = Infinity;
  private maxUs = -Infinity;
  private negatives = 0;

  recordMs(ms: number): void {
    const us = Math.round(ms * 1000);
    if (us < this.minUs) this.minUs = us;
    if (us > this.maxUs) this.maxUs = us;
    if (us < 0) this.negatives++;
    this.hist.recordValue(Math.min(Math.max(0, us), HIST_OPTS.highestTrackableValue));
  }

  get count(): number {
    return this.hist.totalCount;
  }

  encode(): EncodedLatency {
    return { histogram: hdr.encodeIntoCompressedBase64(this.hist), minUs: this.count ? this.minUs : 0, maxUs: this.count ? this.maxUs : 0, count: this.count, negatives: this.negatives };
  }
}

/** Merge encoded histograms (one per shard or per target client group) exactly. */
export function mergeLatency(parts: readonly EncodedLatency[]): EncodedLatency {
  const merged = newHistogram();
  let minUs = Infinity;
  let maxUs = -Infinity;
  let count = 0;
  let negatives = 0;
  for (const p of parts) {
    if (p.count === 0) continue;
    merged.add(hdr.decodeFromCompressedBase64(p.histogram));
    minUs = Math.min(minUs, p.minUs);
    maxUs = Math.max(maxUs, p.maxUs);
    count += p.count;
    negatives += p.negatives;
  }
  return { histogram: hdr.encodeIntoCompressedBase64(merged), minUs: count ? minUs : 0, maxUs: count ? maxUs : 0, count, negatives };
}

const ms = (us: number) => Math.round(us) / 1000;

export function summarize(enc: EncodedLatency): LatencyReport {
  if (enc.count === 0) {
    const zero = { avg: 0, p50: 0, p95: 0, p99: 0, max: 0 };
    return { latencyRawMs: { ...zero, min: 0, count: 0 }, latencyOverMinMs: { ...zero, skewFloor: 0 }, skewFloor: 0 };
  }
  const h = hdr.decodeFromCompressedBase64(enc.histogram);
  // Histogram percentiles are bucket-rounded; clamp into the exact [min, max] range.
  const at = (p: number) => Math.min(enc.maxUs, Math.max(enc.minUs, h.getValueAtPercentile(p)));
  const floor = enc.minUs;
  const view = (shift: number): LatencySummary => ({ avg: ms(h.mean - shift), p50: ms(at(50) - shift), p95: ms(at(95) - shift), p99: ms(at(99) - shift), max: ms(enc.maxUs - shift) });
  return {
    latencyRawMs: { ...view(0), min: ms(floor), count: enc.count },
    latencyOverMinMs: { ...view(floor), skewFloor: ms(floor) },
    skewFloor: ms(floor),
  };
}

/**
 * The benchmark's `latencySamplesSorted`: at most `cap` evenly spaced values (ms) of the sorted
 * raw latencies, element floor(i·(n−1)/(k−1)) for i in 0..k−1. Read from the histogram, so each is
 * bucket-rounded (3 significant digits) and clamped to the exact min/max; the first and last are exact.
 */
export function sortedSamples(enc: EncodedLatency, cap: number): number[] {
  const n = enc.count;
  if (cap <= 0 || n === 0) return [];
  const k = Math.min(cap, n);
  const h = hdr.decodeFromCompressedBase64(enc.histogram);
  const out: number[] = [];
  for (let i = 0; i < k; i++) {
    const idx = k === 1 ? 0 : Math.floor((i * (n - 1)) / (k - 1));
    const us = idx === 0 ? enc.minUs : idx === n - 1 ? enc.maxUs : Math.min(enc.maxUs, Math.max(enc.minUs, h.getValueAtPercentile(((idx + 1) / n) * 100)));
    out.push(ms(us));
  }
  return out;
}
