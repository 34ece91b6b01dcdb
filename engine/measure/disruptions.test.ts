import { describe, expect, it } from 'vitest';
import type { PlanStep } from '../../chaos/plans/schedule.ts';
import { DisruptionTracker } from './disruptions.ts';
import { DeliveryLedger } from './ledger.ts';

/**
 * Scenario: 3 clients, one partition at t=10 s hitting clients 0 and 1 (client 2 is in another
 * group), messages every second from t=0..19.
 *   client 0: notices after 40 ms, back at 5 s, resumed; receives everything (replay).
 *   client 1: notices after 60 ms, never comes back; loses everything from t=10.
 */
describe('DisruptionTracker', () => {
  const steps: PlanStep[] = [{ kind: 'partition', scope: 'group', target: 0, atMs: 10_000, durationMs: 3000 }];
  const T0 = 1_000_000;
  /** The session's record of who is connected (it is written before the tracker hears of it). */
  const upRecord = (n: number) => {
    const up = new Uint8Array(n);
    return { up, isUp: (i: number) => up[i] === 1 };
  };
  const build = () => {
    const { up, isUp } = upRecord(3);
    const tr = new DisruptionTracker(steps, 3, isUp);
    const connect = (c: number, at: number, resumed: boolean) => ((up[c] = 1), tr.onConnected(c, at, resumed));
    const disconnect = (c: number, at: number) => ((up[c] = 0), tr.onDisconnected(c, at));
    const ledger = new DeliveryLedger(3, 20);
    const sentAtMs = [NaN, ...Array.from({ length: 20 }, (_, k) => k * 1000)];
    for (const c of [0, 1, 2]) connect(c, T0, false);
    tr.begin(0, [0, 1], T0 + 10_000);
    disconnect(0, T0 + 10_040);
    disconnect(1, T0 + 10_060);
    connect(0, T0 + 15_000, true);
    for (let seq = 1; seq <= 20; seq++) {
      const sent = sentAtMs[seq]!;
      ledger.record(2, seq, 5);
      ledger.record(0, seq, sent >= 10_000 && sent < 15_000 ? 15_000 - sent : 5);
      if (sent < 10_000) ledger.record(1, seq, 5);
    }
    return { tr, ledger, sentAtMs };
  };

  it('measures detection and recovery per affected client', () => {
    const { tr, ledger, sentAtMs } = build();
    const r = tr.report('partition', new Set([0]), ledger, sentAtMs, true);
    expect(r).toMatchObject({ kind: 'partition', events: 1, affectedClients: 2, undetected: 0, unrecovered: 1, resumedPct: 100 });
    expect(r.detectMs).toEqual({ count: 2, p50: 40, p95: 40, max: 60 });
    expect(r.recoverMs).toEqual({ count: 1, p50: 5000, p95: 5000, max: 5000 });
  });

  it('builds the recovery curve from publish time relative to the disruption', () => {
    const { tr, ledger, sentAtMs } = build();
    const { curve } = tr.report('partition', new Set([0]), ledger, sentAtMs, true);
    const at = (t: number) => curve.find((p) => p.tSec === t)!;
    expect(curve[0]!.tSec).toBe(-2);
    // Before the partition both affected clients got everything, promptly.
    expect(at(-1)).toMatchObject({ expected: 2, delivered: 2, deliveredPct: 100, latencyP50Ms: 5 });
    // During it only the client that came back has them (replayed late); after it too.
    expect(at(0)).toMatchObject({ expected: 2, delivered: 1, deliveredPct: 50, latencyP50Ms: 5000 });
    expect(at(4)).toMatchObject({ delivered: 1, latencyP50Ms: 1000 });
    expect(at(9)).toMatchObject({ expected: 2, delivered: 1, latencyP50Ms: 5 });
    // Only messages that were published are placed: the run ends at t=19 s.
    expect(curve.at(-1)!.tSec).toBe(9);
  });

  it('ignores clients that were not connected when hit, and steps never applied', () => {
    const { up, isUp } = upRecord(2);
    const tr = new DisruptionTracker(steps, 2, isUp);
    up[0] = 1;
    tr.onConnected(0, T0, false);
    tr.begin(0, [0, 1], T0 + 10_000);
    expect(tr.report('partition', new Set([0]), new DeliveryLedger(2, 1), [NaN, 0], false)).toMatchObject({ affectedClients: 1, resumedPct: null });
    expect(tr.report('partition', new Set(), new DeliveryLedger(2, 1), [NaN, 0], false)).toMatchObject({ events: 0, affectedClients: 0 });
  });
});
