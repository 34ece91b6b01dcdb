import { describe, expect, it } from 'vitest';
import { HARD_CAP_FACTOR, ProgressWatch } from './slow-consumer.ts';

const limits = { maxBufferedBytes: 1000, slowConsumerMs: 2000 };

describe('ProgressWatch (too-slow rule of the reference servers)', () => {
  it('a queue over the bound is tolerated for slowConsumerMs, then the socket is too slow', () => {
    const w = new ProgressWatch();
    expect(w.tooSlow(500, limits, 0 + 1)).toBe(false);
    expect(w.tooSlow(5000, limits, 100)).toBe(false);
    expect(w.tooSlow(5000, limits, 2000)).toBe(false);
    expect(w.tooSlow(5000, limits, 2101)).toBe(true);
  });

  it('draining restarts the clock', () => {
    const w = new ProgressWatch();
    expect(w.tooSlow(5000, limits, 100)).toBe(false);
    expect(w.tooSlow(5000, limits, 1900)).toBe(false);
    w.drained();
    expect(w.tooSlow(5000, limits, 3000)).toBe(false);
    expect(w.tooSlow(5000, limits, 4900)).toBe(false);
    expect(w.tooSlow(5000, limits, 5001)).toBe(true);
  });

  it('past the hard cap the socket goes at once', () => {
    const w = new ProgressWatch();
    expect(w.tooSlow(limits.maxBufferedBytes * HARD_CAP_FACTOR, limits, 1)).toBe(false);
    expect(new ProgressWatch().tooSlow(limits.maxBufferedBytes * HARD_CAP_FACTOR + 1, limits, 1)).toBe(true);
  });
});
