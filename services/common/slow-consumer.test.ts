import { describe, expect, it } from 'vitest';
import { HARD_CAP_FACTOR, ProgressWatch } from './slow-consumer.ts';

const limits = { maxBufferedBytes: 1000, slowConsumerMs: 2000 };

describe('ProgressWatch (too-slow rule of the reference servers)', () => {
  it('a burst over the bound is tolerated while the reader drains; a stall past slowConsumerMs is not', () => {
    const w = new ProgressWatch();
    const t0 = Date.now();
    expect(w.tooSlow(500, limits, t0)).toBe(false);
    expect(w.tooSlow(5000, limits, t0 + 100)).toBe(false);
    expect(w.tooSlow(5000, limits, t0 + 1900)).toBe(false);
    expect(w.tooSlow(5000, limits, t0 + 2001)).toBe(true);
  });

  it('draining restarts the clock', () => {
    const w = new ProgressWatch();
    const t0 = Date.now();
    expect(w.tooSlow(5000, limits, t0 + 1500)).toBe(false);
    w.drained();
    expect(w.tooSlow(5000, limits, Date.now() + 1500)).toBe(false);
  });

  it('past the hard cap the socket goes at once', () => {
    const w = new ProgressWatch();
    expect(w.tooSlow(limits.maxBufferedBytes * HARD_CAP_FACTOR + 1, limits)).toBe(true);
  });
});
