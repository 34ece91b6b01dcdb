import { describe, expect, it } from 'vitest';
import { LatencyRecorder, summarize } from '../../../engine/measure/latency.ts';
import { DeliveryLedger } from '../../../engine/measure/ledger.ts';
import type { RunnerHealth } from '../../../engine/measure/runner-health.ts';
import { mergeSteps, percentilesMs } from './merge.ts';
import type { LoaderStep } from './messages.ts';
import { nodeOf, slices, toRanges } from './plan.ts';

const health: RunnerHealth = { runnerPeakRssMb: 50, runnerLoopLagMs: { p50: 0, p99: 1, max: 2 }, runnerStalledWindowsPct: 0 };

/** A deterministic spread of latencies with a long tail (so percentiles differ per loader). */
const lat = (i: number) => (i % 97 === 0 ? 250 + (i % 13) : (i * 7919) % 40) + (i % 3) * 0.25;

describe('merging loader results', () => {
  it('gives exactly the union: ledger totals and every percentile as if one loader had recorded everything', () => {
    const clients = 30;
    const messages = 200;
    const union = { ledger: new DeliveryLedger(clients, messages), lat: new LatencyRecorder() };
    // Loaders 0..2 hold disjoint client slices: rows 0-9, 10-19, 20-29 of the union.
    const parts = [0, 1, 2].map(() => ({ ledger: new DeliveryLedger(10, messages), lat: new LatencyRecorder() }));
    for (let s = 1; s <= messages; s++) {
      if (s % 50 === 0) continue; // never accepted: counted as unaccepted where it arrives
      union.ledger.accept(s);
      for (const p of parts) p.ledger.accept(s);
    }
    let i = 0;
    for (let c = 0; c < clients; c++) {
      for (let s = 1; s <= messages; s++) {
        i++;
        if ((c + s) % 37 === 0) continue; // lost
        const ms = lat(i) * (c < 10 ? 1 : c < 20 ? 3 : 0.5);
        const p = parts[Math.floor(c / 10)]!;
        if (union.ledger.record(c, s, ms) === 'new') union.lat.recordMs(ms);
        if (p.ledger.record(c % 10, s, ms) === 'new') p.lat.recordMs(ms);
        if ((c * s) % 101 === 0) {
          // A duplicate is never a delivery.
          expect(union.ledger.record(c, s, ms)).toBe('duplicate');
          p.ledger.record(c % 10, s, ms);
        }
      }
    }
    const steps: LoaderStep[] = parts.map((p, loader) => ({ type: 'step', loader, totals: p.ledger.totals(), latency: p.lat.encode(), health, cpuPct: 10, open: 10, disconnects: (loader === 1 ? { server_closed: 2 } : {}) as Record<string, number> }));
    const merged = mergeSteps(steps);
    expect(merged.totals).toEqual(union.ledger.totals());
    expect(merged.totals.duplicates).toBeGreaterThan(0);
    expect(merged.totals.lostDeliveries).toBeGreaterThan(0);
    const u = union.lat.encode();
    expect({ count: merged.latency.count, min: merged.latency.minUs, max: merged.latency.maxUs }).toEqual({ count: u.count, min: u.minUs, max: u.maxUs });
    const ps = [1, 25, 50, 90, 99, 99.9, 100];
    expect(percentilesMs(merged.latency, ps)).toEqual(percentilesMs(u, ps));
    expect(summarize(merged.latency)).toEqual(summarize(u));
    // The seed's "worst loader's p99" would be another figure: the merge must not be that.
    const worstP99 = Math.max(...steps.map((s) => percentilesMs(s.latency, [99])[0]!));
    expect(percentilesMs(merged.latency, [99])[0]).not.toBe(worstP99);
    expect(merged.disconnects).toEqual({ server_closed: 2 });
    expect(merged.open).toBe(30);
  });
});

describe('the load plan', () => {
  it('deals connections into contiguous loader slices and alternates each stream over the nodes', () => {
    expect(slices(10, 3)).toEqual([{ first: 0, count: 4 }, { first: 4, count: 3 }, { first: 7, count: 3 }]);
    // 1000 streams, 2 nodes: stream 5's subscribers are connections 5, 1005, 2005...: nodes 0, 1, 0...
    expect([5, 1005, 2005, 3005].map((i) => nodeOf(i, 1000, 2))).toEqual([0, 1, 0, 1]);
    expect(nodeOf(7, 1000, 1)).toBe(0);
  });

  it('sends accepted seqs as ranges', () => {
    expect(toRanges([3, 1, 2, 5, 6, 9])).toEqual([[1, 3], [5, 6], [9, 9]]);
    expect(toRanges([])).toEqual([]);
  });
});
