import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PingScheduler } from './ping.ts';

describe('PingScheduler', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('pings every connection once per interval, spread over ticks, with one shared frame per tick', () => {
    const ps = new PingScheduler<{ sendFrame(f: Buffer): void; got: Buffer[] }>(() => 1_700_000_000_000);
    const conns = Array.from({ length: 95 }, () => {
      const c = { got: [] as Buffer[], sendFrame: (f: Buffer) => c.got.push(f) };
      return c;
    });
    for (const c of conns) ps.add(c, 3);
    vi.advanceTimersByTime(300);
    const firstTick = conns.filter((c) => c.got.length === 1);
    expect(firstTick).toHaveLength(10);
    expect(new Set(firstTick.map((c) => c.got[0])).size).toBe(1);
    vi.advanceTimersByTime(2700);
    expect(conns.every((c) => c.got.length === 1)).toBe(true);
    vi.advanceTimersByTime(3000);
    expect(conns.every((c) => c.got.length === 2)).toBe(true);
    expect(conns[0]!.got[0]!.subarray(2).toString()).toBe('{"type":"ping","message":1700000000}');
    for (const c of conns) ps.remove(c, 3);
    expect(ps.size).toBe(0);
  });
});
