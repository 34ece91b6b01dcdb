import type { ConditionName } from '../../chaos/weather/conditions.ts';
import type { WeatherPlan } from '../../chaos/weather/population.ts';
import type { PlanStep } from '../../chaos/plans/schedule.ts';
import type { DisruptionKind } from '../../chaos/plans/catalog.ts';
import type { DisruptionReport, DisruptionTracker } from '../../engine/measure/disruptions.ts';
import { LatencyRecorder, summarize, type EncodedLatency, type LatencyReport } from '../../engine/measure/latency.ts';
import type { LossReport } from '../../engine/measure/client-timelines.ts';
import { pct } from '../../engine/session/results.ts';
import type { RunSession } from '../../engine/session/session.ts';

/** One weather condition's clients, as the run's result reports them (the run's own figures, over its clients only). */
export interface ConditionResult extends LatencyReport, Partial<LossReport> {
  condition: ConditionName;
  share: number;
  clients: number;
  proxies: number;
  expectedDeliveries: number;
  receivedDeliveries: number;
  lostDeliveries: number;
  unconfirmedDeliveries: number;
  deliveryRatePct: number;
  /** The exact, mergeable latency record of this condition's first deliveries. */
  latencyHistogram: EncodedLatency;
  /** Per disruption kind, only this condition's steps: detect, recover, resumed, curve. */
  disruptions: DisruptionReport[];
}

/** The population as run: the spec, its time scale, and each condition's results. */
export interface WeatherResult {
  spec: string;
  scale: number;
  conditions: ConditionResult[];
}

/** Per-condition books of a weather run: the deal, and a latency recorder per condition fed as deliveries arrive. */
export class WeatherBook {
  private readonly latency: LatencyRecorder[];
  private readonly members: number[][];

  constructor(readonly plan: WeatherPlan, readonly spec: string, readonly scale: number) {
    this.latency = plan.shares.map(() => new LatencyRecorder());
    this.members = plan.shares.map((_, c) => plan.deal.flatMap((d, i) => (d === c ? [i] : [])));
  }

  /** A first delivery at client `i`. */
  arrival(i: number, latencyMs: number): void {
    this.latency[this.plan.deal[i]!]?.recordMs(latencyMs);
  }

  /** Steps (indices into `steps`) that belong to condition c: its proxies' and its clients' drops. */
  private stepsOf(c: number, steps: readonly PlanStep[], applied: ReadonlySet<number>): Set<number> {
    const mine = (st: PlanStep) => (st.scope === 'group' ? this.plan.groupCondition[st.target] === c : this.plan.deal[st.target] === c);
    return new Set([...applied].filter((i) => mine(steps[i]!)));
  }

  report(s: RunSession, tracker: DisruptionTracker, kinds: readonly DisruptionKind[], steps: readonly PlanStep[], applied: ReadonlySet<number>, sentAtMs: readonly number[], replays: boolean, lostToEpoch?: (client: number, seq: number) => boolean): WeatherResult {
    const conditions = this.plan.shares.map((w, c): ConditionResult => {
      const of = this.members[c]!;
      const t = s.ledger.totals(of);
      const enc = this.latency[c]!.encode();
      const own = this.stepsOf(c, steps, applied);
      const used = kinds.filter((k) => steps.some((st, i) => st.kind === k && own.has(i)));
      return {
        condition: w.condition,
        share: w.share,
        clients: of.length,
        proxies: this.plan.groupCondition.filter((g) => g === c).length,
        expectedDeliveries: t.expectedDeliveries,
        receivedDeliveries: t.receivedDeliveries,
        lostDeliveries: t.lostDeliveries,
        unconfirmedDeliveries: t.unconfirmedDeliveries,
        deliveryRatePct: pct(t.receivedDeliveries - t.unconfirmedDeliveries, t.expectedDeliveries),
        ...summarize(enc),
        latencyHistogram: enc,
        ...s.lossReport(lostToEpoch, of),
        disruptions: used.map((k) => tracker.report(k, own, s.ledger, sentAtMs, replays)),
      };
    });
    return { spec: this.spec, scale: this.scale, conditions };
  }
}
