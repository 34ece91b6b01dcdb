import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PingScheduler } from './ping.ts';

describe('PingScheduler', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('pings every connection once per interval, spread over ticks, with one shared frame per tick', () => {
    const ps = new PingScheduler<{ sendFrame(f: Buffer): void; got: Buffer[] }>(() => 1_700_000_000_000);
    const conns = Array.from({ length: 950 }, () => {
      const c = { got: [] as Buffer[], sendFrame: (f: Buffer) => c.got.push(f) };
      return c;
    });
    for (const c of conns) ps.add(c, 3);
    vi.advanceTimersByTime(30);
    const firstTick = conns.filter((c) => c.got.length === 1);
    expect(firstTick).toHaveLength(10);
    expect(new Set(firstTick.map((c) => c.got[0])).size).toBe(1);
    vi.advanceTimersByTime(270);
    expect(conns.filter((c) => c.got.length === 1)).toHaveLength(100);
    vi.advanceTimersByTime(2700);
    expect(conns.every((c) => c.got.length === 1)).toBe(true);
    vi.advanceTimersByTime(3000);
    expect(conns.every((c) => c.got.length === 2)).toBe(true);
    expect(conns[0]!.got[0]!.subarray(2).toString()).toBe('{"type":"ping","message":1700000000}');
    for (const c of conns) ps.remove(c, 3);
    expect(ps.size).toBe(0);
  });

  const conn = () => {
    const c = { got: 0, sendFrame: () => void c.got++ };
    return c;
  };

  it('a pass starts once per interval even with fewer connections than ticks: one connection is pinged every 3 s, not every tick', () => {
    const ps = new PingScheduler<ReturnType<typeof conn>>();
    const c = conn();
    ps.add(c, 3);
    vi.advanceTimersByTime(3000);
    expect(c.got).toBe(1);
    vi.advanceTimersByTime(3000);
    expect(c.got).toBe(2);
    vi.advanceTimersByTime(30_000);
    expect(c.got).toBe(12);
    ps.stop();
  });

  it('10,000 connections: at most 1% pinged per tick, each exactly once per interval, interval after interval', () => {
    const ps = new PingScheduler<ReturnType<typeof conn>>();
    const conns = Array.from({ length: 10_000 }, conn);
    for (const c of conns) ps.add(c, 3);
    const total = () => conns.reduce((n, c) => n + c.got, 0);
    let most = 0;
    for (let t = 0; t < 100; t++) {
      const before = total();
      vi.advanceTimersByTime(30);
      most = Math.max(most, total() - before);
    }
    expect(most).toBe(100);
    expect(conns.every((c) => c.got === 1)).toBe(true);
    vi.advanceTimersByTime(27_000);
    expect(conns.every((c) => c.got === 10)).toBe(true);
    ps.stop();
  });
});
