import type { DisruptionKind } from '../../chaos/plans/catalog.ts';
import type { PlanStep } from '../../chaos/plans/schedule.ts';
import type { DeliveryLedger } from './ledger.ts';
import { entryOf, quantiles } from './timeseries.ts';

/** One point of a recovery curve: messages published `tSec`..`tSec+1` s after a disruption began. */
export interface CurvePoint {
  tSec: number;
  expected: number;
  delivered: number;
  deliveredPct: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
}

export interface DisruptionReport {
  kind: DisruptionKind;
  events: number;
  /** Clients that were connected when a disruption hit them. */
  affectedClients: number;
  /** Time from the disruption's start until the client library noticed (disconnect event), ms. */
  detectMs: ReturnType<typeof spread>;
  /** Affected clients that never noticed before the disruption was lifted or the run ended. */
  undetected: number;
  /** Time from the disruption's start until the client was subscribed again, ms. */
  recoverMs: ReturnType<typeof spread>;
  /** Clients that lost their connection and were not subscribed again by the end of the run. */
  unrecovered: number;
  /** Share of reconnects after this disruption where the server restored the session; null without replay or reconnects. */
  resumedPct: number | null;
  curve: CurvePoint[];
}

const spread = (values: number[]) => {
  const q = quantiles(values);
  return { count: values.length, p50: q[50] ?? 0, p95: q[95] ?? 0, max: q[100] ?? 0 };
};

/**
 * Follows every disruption to its effect on each affected client: when the library noticed, when
 * it was back, whether it resumed. A client has at most one open disruption; a newer one
 * supersedes it.
 */
export class DisruptionTracker {
  private readonly pending: ({ step: number; startedAt: number; detected: boolean } | undefined)[];
  // Per step: [client, ms] pairs, and the clients hit and resumed, so a report can cover some clients only (a weather condition's).
  private readonly detect = new Map<number, [number, number][]>();
  private readonly recover = new Map<number, [number, number][]>();
  private readonly resumed = new Map<number, number[]>();
  private readonly affected = new Map<number, number[]>();

  /** `isUp`: whether client i is connected now, the session's own record (RunSession.up). */
  constructor(
    private readonly steps: readonly PlanStep[],
    clients: number,
    private readonly isUp: (i: number) => boolean,
  ) {
    this.pending = new Array(clients);
  }

  /** A disruption `step` hits `clients` at wall time `now`. */
  begin(step: number, clients: Iterable<number>, now: number): void {
    const hit: number[] = [];
    for (const i of clients) {
      if (!this.isUp(i)) continue;
      hit.push(i);
      this.pending[i] = { step, startedAt: now, detected: false };
    }
    this.affected.set(step, hit);
  }

  onDisconnected(i: number, now: number): void {
    const p = this.pending[i];
    if (p && !p.detected) {
      p.detected = true;
      entryOf(this.detect, p.step, () => []).push([i, now - p.startedAt]);
    }
  }

  /** Returns the recovery (disruption step, ms since it began) when this reconnect ended one, for per-run series. */
  onConnected(i: number, now: number, resumed: boolean): { step: number; ms: number } | undefined {
    const p = this.pending[i];
    if (!p || !p.detected) return undefined;
    entryOf(this.recover, p.step, () => []).push([i, now - p.startedAt]);
    if (resumed) entryOf(this.resumed, p.step, () => []).push(i);
    this.pending[i] = undefined;
    return { step: p.step, ms: now - p.startedAt };
  }

  /**
   * Per-kind report. `sentAtMs[seq]` is when each message was published (ms after publishing
   * began) so the curve can place every message relative to each disruption. `only`: the clients
   * to cover (a weather condition's, for a disruption that hit every client); default every one.
   */
  report(kind: DisruptionKind, applied: ReadonlySet<number>, ledger: DeliveryLedger, sentAtMs: readonly number[], replays: boolean, only?: ReadonlySet<number>): DisruptionReport {
    const idx = this.steps.map((s, i) => i).filter((i) => this.steps[i]!.kind === kind && applied.has(i));
    const mine = (c: number) => !only || only.has(c);
    const all = (m: Map<number, [number, number][]>) => idx.flatMap((i) => (m.get(i) ?? []).filter(([c]) => mine(c)).map(([, v]) => v));
    const affected = idx.reduce((n, i) => n + (this.affected.get(i) ?? []).filter(mine).length, 0);
    const detect = all(this.detect);
    const recover = all(this.recover);
    const resumed = idx.reduce((n, i) => n + (this.resumed.get(i) ?? []).filter(mine).length, 0);
    return {
      kind,
      events: idx.length,
      affectedClients: affected,
      detectMs: spread(detect),
      undetected: affected - detect.length,
      recoverMs: spread(recover),
      unrecovered: detect.length - recover.length,
      resumedPct: replays && recover.length ? Math.round((resumed / recover.length) * 1000) / 10 : null,
      curve: this.curve(idx, ledger, sentAtMs, mine),
    };
  }

  /** Delivery and latency of messages by publish time relative to each disruption's start, 1 s bins from −2 s. */
  private curve(idx: number[], ledger: DeliveryLedger, sentAtMs: readonly number[], mine: (c: number) => boolean): CurvePoint[] {
    const FROM = -2;
    const bins = new Map<number, { expected: number; delivered: number; lat: number[] }>();
    for (const i of idx) {
      const step = this.steps[i]!;
      const span = Math.min(120, Math.ceil(step.durationMs / 1000) + 20);
      for (let seq = 1; seq < sentAtMs.length; seq++) {
        const t = Math.floor((sentAtMs[seq]! - step.atMs) / 1000);
        if (t < FROM || t >= span) continue;
        const b = entryOf(bins, t, () => ({ expected: 0, delivered: 0, lat: [] as number[] }));
        for (const c of this.affected.get(i) ?? []) {
          if (!mine(c)) continue;
          b.expected++;
          const l = ledger.latencyOf(c, seq);
          if (l !== undefined) {
            b.delivered++;
            b.lat.push(l);
          }
        }
      }
    }
    return [...bins.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([tSec, b]) => {
        const q = quantiles(b.lat);
        return { tSec, expected: b.expected, delivered: b.delivered, deliveredPct: b.expected ? Math.round((b.delivered / b.expected) * 10000) / 100 : 100, latencyP50Ms: q[50] ?? null, latencyP95Ms: q[95] ?? null };
      });
  }
}
