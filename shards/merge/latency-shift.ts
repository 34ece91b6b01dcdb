import * as hdr from 'hdr-histogram-js';
import { newHistogram, type EncodedLatency } from '../../engine/measure/latency.ts';

interface Iterable {
  recordedValuesIterator: { reset(): void; hasNext(): boolean; next(): { valueIteratedTo: number; countAtValueIteratedTo: number } };
}

/**
 * Shift every recorded latency by `deltaUs` (shared-stream mode: take a shard's clock offset out
 * of its latencies before the merge). Bucket by bucket, so the result keeps histogram precision
 * and stays mergeable; values pushed below zero are clamped to 0 and counted as `negatives`.
 */
export function shiftLatency(enc: EncodedLatency, deltaUs: number): EncodedLatency {
  const d = Math.round(deltaUs);
  if (enc.count === 0 || d === 0) return enc;
  const src = hdr.decodeFromCompressedBase64(enc.histogram) as unknown as Iterable;
  const out = newHistogram();
  let negatives = 0;
  const it = src.recordedValuesIterator;
  it.reset();
  // Bounded: one step per non-empty bucket (a few thousand at most for a 3-digit histogram).
  while (it.hasNext()) {
    const v = it.next();
    const shifted = v.valueIteratedTo + d;
    if (shifted < 0) negatives += v.countAtValueIteratedTo;
    out.recordValueWithCount(Math.max(0, shifted), v.countAtValueIteratedTo);
  }
  const minUs = enc.minUs + d;
  return {
    histogram: hdr.encodeIntoCompressedBase64(out),
    minUs,
    maxUs: enc.maxUs + d,
    count: enc.count,
    // Samples that were already negative stay negative only if the shift does not lift them; the
    // exact minimum decides, the bucket walk counts what it can see.
    negatives: minUs < 0 ? Math.max(negatives, 1) : 0,
  };
}
