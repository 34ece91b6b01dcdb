import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PingScheduler } from './ping.ts';

describe('PingScheduler', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('pings every connection once per interval, spread over ticks, with one shared frame per tick', () => {
    const ps = new PingScheduler<{ sendFrame(f: Buffer): void; got: Buffer[]; duePing: Buffer | undefined }>(() => 1_700_000_000_000);
    const conns = Array.from({ length: 950 }, () => {
      const c = { got: [] as Buffer[], duePing: undefined, sendFrame: (f: Buffer) => c.got.push(f) };
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
    for (const c of conns) ps.remove(c);
    expect(ps.size).toBe(0);
  });

  const conn = () => {
    const c = { got: 0, duePing: undefined as Buffer | undefined, sendFrame: () => void c.got++ };
    return c;
  };
  /** What Connection.sendFrame does: take the due ping along (undefined when none was due). */
  const take = (c: { duePing: Buffer | undefined }) => {
    const f = c.duePing;
    c.duePing = undefined;
    return f;
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

  describe('piggyback: a due ping rides with the next frame', () => {
    it('a tick makes pings due instead of writing them; the next frame takes its ping along, and the flush does not send it again', () => {
      const ps = new PingScheduler<ReturnType<typeof conn>>(() => 1_700_000_000_000, undefined, true);
      const conns = Array.from({ length: 1000 }, conn);
      for (const c of conns) ps.add(c, 3);
      vi.advanceTimersByTime(30);
      expect(conns.every((c) => c.got === 0)).toBe(true);
      const due = conns.filter((c) => take(c) !== undefined);
      expect(due).toHaveLength(10);
      expect(due.every((c) => take(c) === undefined)).toBe(true); // taken once
      vi.advanceTimersByTime(3000);
      expect(due.every((c) => c.got === 0)).toBe(true); // never flushed alone, the next pass aside
      ps.stop();
    });

    it('a due ping no frame took goes out alone after a third of the interval (1 s at most), not before', () => {
      const ps = new PingScheduler<ReturnType<typeof conn>>(() => 1_700_000_000_000, undefined, true);
      const c = conn();
      ps.add(c, 3);
      vi.advanceTimersByTime(30); // the first tick starts a pass: c's ping is due
      expect(c.got).toBe(0);
      vi.advanceTimersByTime(30 * 33 - 1);
      expect(c.got).toBe(0);
      vi.advanceTimersByTime(1);
      expect(c.got).toBe(1);
      expect(take(c)).toBeUndefined();
      ps.stop();
    });

    it('10,000 connections, half of them taking their pings along: each gets exactly one ping per interval', () => {
      const ps = new PingScheduler<ReturnType<typeof conn>>(undefined, undefined, true);
      const conns = Array.from({ length: 10_000 }, conn);
      for (const c of conns) ps.add(c, 3);
      const taken = new Map<ReturnType<typeof conn>, number>();
      for (let t = 0; t < 1000; t++) {
        vi.advanceTimersByTime(30);
        for (let i = t % 2; i < conns.length; i += 37) if (take(conns[i]!)) taken.set(conns[i]!, (taken.get(conns[i]!) ?? 0) + 1);
      }
      // 30 s = 10 intervals; the last pass's pings may still be due
      for (const c of conns) expect((taken.get(c) ?? 0) + c.got).toBeGreaterThanOrEqual(9);
      for (const c of conns) expect((taken.get(c) ?? 0) + c.got).toBeLessThanOrEqual(10);
      expect(taken.size).toBeGreaterThan(0);
      ps.stop();
    });

    it('a removed connection is not pinged by the flush', () => {
      const ps = new PingScheduler<ReturnType<typeof conn>>(undefined, undefined, true);
      const a = conn();
      const b = conn();
      ps.add(a, 3);
      ps.add(b, 3);
      vi.advanceTimersByTime(30);
      ps.remove(a);
      vi.advanceTimersByTime(1100); // one ping per tick here: b's is due a tick after a's
      expect(a.got).toBe(0);
      expect(b.got).toBe(1);
      ps.stop();
    });
  });
});
