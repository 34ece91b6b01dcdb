import { describe, expect, it } from 'vitest';
import { OrderLog } from './order-log.ts';

/** Every entry, oldest first, by draining a copy built from the same pushes. */
function drain<S>(log: OrderLog<S>): [S, number][] {
  const out: [S, number][] = [];
  for (let s = log.oldestState(); s !== undefined; s = log.oldestState()) {
    out.push([s, log.oldestOffset()]);
    log.dropOldest();
  }
  return out;
}

describe('OrderLog (the memory broker store order)', () => {
  it('keeps push order across wrap-around and growth, and empties cleanly', () => {
    const log = new OrderLog<string>();
    const expected: [string, number][] = [];
    let n = 0;
    // Interleave pushes and drops so the head wraps, then push past the capacity so it grows mid-ring.
    for (let round = 0; round < 50; round++) {
      for (let k = 0; k < 7; k++) {
        log.push(`s${n % 5}`, n);
        expected.push([`s${n % 5}`, n]);
        n++;
      }
      for (let k = 0; k < 5; k++) {
        expect([log.oldestState(), log.oldestOffset()]).toEqual(expected.shift());
        log.dropOldest();
      }
    }
    expect(log.size).toBe(expected.length);
    expect(drain(log)).toEqual(expected);
    expect(log.size).toBe(0);
    expect(log.oldestState()).toBeUndefined();
    expect(Number.isNaN(log.oldestOffset())).toBe(true);
    log.dropOldest(); // a no-op on an empty log
    expect(log.size).toBe(0);
  });

  it('retain keeps the accepted entries in order, in place, over a wrapped ring', () => {
    const log = new OrderLog<string>();
    for (let i = 0; i < 12; i++) log.push(`a${i}`, i);
    for (let i = 0; i < 10; i++) log.dropOldest(); // head near the end of the 16-slot ring
    for (let i = 12; i < 24; i++) log.push(`a${i}`, i); // wraps
    log.retain((_s, offset) => offset % 3 !== 0);
    const kept = [10, 11, 13, 14, 16, 17, 19, 20, 22, 23];
    expect(log.size).toBe(kept.length);
    log.push('after', 99);
    expect(drain(log)).toEqual([...kept.map((i) => [`a${i}`, i]), ['after', 99]]);
  });
});
