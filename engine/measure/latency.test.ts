import { describe, expect, it } from 'vitest';
import * as hdr from 'hdr-histogram-js';
import { mulberry32 } from '../../lib/rng.ts';
import { LatencyRecorder, mergeLatency, newHistogram, summarize } from './latency.ts';

describe('latency histograms', () => {
  it('merging encoded shards equals the histogram of the union', () => {
    const rng = mulberry32(42);
    const shards = [new LatencyRecorder(), new LatencyRecorder(), new LatencyRecorder()];
    const union = new LatencyRecorder();
    for (let i = 0; i < 30_000; i++) {
      // Long-tailed, like replay latency: mostly ms, sometimes seconds.
      const v = rng() < 0.9 ? 2 + rng() * 40 : 200 + rng() * 9000;
      shards[i % 3]!.recordMs(v);
      union.recordMs(v);
    }
    const merged = mergeLatency(shards.map((s) => s.encode()));
    const direct = union.encode();
    expect(merged.count).toBe(30_000);
    expect(merged.minUs).toBe(direct.minUs);
    expect(merged.maxUs).toBe(direct.maxUs);
    expect(summarize(merged)).toEqual(summarize(direct));
    // Bucket for bucket, not just the summary.
    const a = hdr.decodeFromCompressedBase64(merged.histogram);
    const b = hdr.decodeFromCompressedBase64(direct.histogram);
    for (const p of [1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100]) expect(a.getValueAtPercentile(p)).toBe(b.getValueAtPercentile(p));
  });

  it('min-normalised percentiles are raw percentiles minus the floor', () => {
    const r = new LatencyRecorder();
    for (const v of [105, 110, 120, 150, 300]) r.recordMs(v);
    const s = summarize(r.encode());
    expect(s.skewFloor).toBe(105);
    expect(s.latencyOverMinMs.max).toBeCloseTo(195, 0);
    expect(s.latencyOverMinMs.p50).toBeCloseTo(s.latencyRawMs.p50 - 105, 3);
    expect(s.latencyRawMs.max).toBe(300);
  });

  it('keeps precision at millisecond scale (no offset rounding)', () => {
    const r = new LatencyRecorder();
    for (let i = 1; i <= 100; i++) r.recordMs(i);
    const s = summarize(r.encode());
    expect(s.latencyRawMs.p50).toBeCloseTo(50, 0);
    expect(s.latencyRawMs.p99).toBeCloseTo(99, 0);
  });

  it('keeps the exact negative minimum so a bad clock is visible', () => {
    const r = new LatencyRecorder();
    r.recordMs(-12);
    r.recordMs(5);
    const enc = r.encode();
    expect(enc.negatives).toBe(1);
    expect(summarize(enc).skewFloor).toBe(-12);
  });

  it('an empty merge is empty', () => {
    expect(mergeLatency([]).count).toBe(0);
    expect(summarize(mergeLatency([new LatencyRecorder().encode()])).latencyRawMs.count).toBe(0);
    expect(newHistogram().totalCount).toBe(0);
  });
});
