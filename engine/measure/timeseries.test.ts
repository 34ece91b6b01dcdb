import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from './ledger.ts';
import { quantiles, SeriesRecorder } from './timeseries.ts';

describe('SeriesRecorder', () => {
  it('buckets connects, dips, arrivals and publishes per second relative to publishing start', () => {
    const t = 1_000_000;
    const s = new SeriesRecorder(3);
    s.start(t);
    for (let i = 0; i < 3; i++) s.connectedAt(i, t + 100 * i);
    s.publishingStarted(t + 2000);
    s.sent(1, t + 2000);
    s.sent(2, t + 2500);
    s.disconnectedAt(1, t + 3100);
    s.disconnectedAt(1, t + 3200); // already down: not counted twice
    s.connectedAt(1, t + 3900, { kind: 'drop', ms: 800 });
    s.arrival(t + 2010);
    s.arrival(t + 2020);
    s.arrival(t + 4100);
    const ledger = new DeliveryLedger(3, 2);
    ledger.record(0, 1, 10);
    ledger.record(1, 1, 10);
    ledger.record(2, 1, 10);
    ledger.record(0, 2, 10);
    const r = s.finish(t + 5000, ledger);
    expect(r.startMs).toBe(-2000);
    expect(r.connected).toEqual([3, 3, 3, 3, 3, 3]);
    expect(r.connectedMin).toEqual([0, 3, 3, 2, 3, 3]);
    expect(r.arrivals).toEqual([0, 0, 2, 0, 1, 0]);
    expect(r.published).toEqual([0, 0, 2, 0, 0, 0]);
    // Both messages fell in bucket 2: 4 of 6 deliveries.
    expect(r.deliveredPctByPublish).toEqual([null, null, 66.67, null, null, null]);
    expect(r.recovery).toEqual([{ kind: 'drop', recovered: 1, quantilesMs: new Array(101).fill(800) }]);
  });

  it('realigns buckets to whole seconds since publishing began', () => {
    const t = 5_000_000;
    const s = new SeriesRecorder(2);
    s.start(t);
    s.connectedAt(0, t + 10);
    s.connectedAt(1, t + 20);
    s.publishingStarted(t + 2300);
    // 1.5 s after publishing began: bucket [1 s, 2 s) since publishing = index 4 from -3 s.
    s.disconnectedAt(0, t + 2300 + 1500);
    const r = s.finish(t + 2300 + 2500, new DeliveryLedger(2, 1));
    expect(r.startMs).toBe(-3000);
    expect(r.connectedMin[4]).toBe(1);
    expect(r.connectedMin[3]).toBe(2);
  });

  it('quantiles are nearest-rank over 101 points', () => {
    const q = quantiles(Array.from({ length: 1001 }, (_, i) => 1000 - i));
    expect(q).toHaveLength(101);
    expect(q[0]).toBe(0);
    expect(q[50]).toBe(500);
    expect(q[100]).toBe(1000);
    expect(quantiles([])).toEqual([]);
  });
});
