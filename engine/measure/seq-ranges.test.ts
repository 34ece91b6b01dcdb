import { describe, expect, it } from 'vitest';
import { decodeRanges, encodeRanges } from './seq-ranges.ts';

describe('seq ranges', () => {
  it('round-trips sets with gaps, singles and the ends', () => {
    const set = new Set([1, 2, 3, 5, 7, 8, 10]);
    const text = encodeRanges((s) => set.has(s), 10);
    expect(text).toBe('1-3,5,7-8,10');
    const back = decodeRanges(text, 10)!;
    expect([...back.keys()].filter((s) => back[s])).toEqual([...set]);
    expect(encodeRanges(() => false, 5)).toBe('');
    expect(decodeRanges('', 5)!.every((x) => x === 0)).toBe(true);
  });

  it('refuses malformed or out-of-range text', () => {
    for (const bad of ['0-3', '3-1', '1-11', 'x', '1,,2', '-2']) expect(decodeRanges(bad, 10), bad).toBeUndefined();
  });
});
