import { isObj } from '../../lib/figures.ts';
import { CONDITIONS, type ConditionName } from '../../chaos/weather/conditions.ts';
import type { WeatherPlan } from '../../chaos/weather/population.ts';
import type { PlanStep } from '../../chaos/plans/schedule.ts';
import { CATALOG, DISRUPTIONS, type DisruptionKind } from '../../chaos/plans/catalog.ts';
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
  /** Coordinator merge: shards whose figures for this condition failed the screen and were left out of it. */
  excludedShards?: string[];
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
    // A server event (deploy's restart) reached every client: it is every condition's.
    const mine = (st: PlanStep) => (CATALOG[st.kind].serverEvent ? true : st.scope === 'group' ? this.plan.groupCondition[st.target] === c : this.plan.deal[st.target] === c);
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
        disruptions: used.map((k) => tracker.report(k, own, s.ledger, sentAtMs, replays, CATALOG[k].serverEvent ? new Set(of) : undefined)),
      };
    });
    return { spec: this.spec, scale: this.scale, conditions };
  }
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const SPREAD_KEYS = ['p50', 'p95', 'max'] as const;

/**
 * Why a shard's `weather` block must not be merged, or undefined: the shape this runner writes,
 * each condition once and known, counts as integers >= 0 within the condition's own clients x
 * messages, at most one report per disruption kind. Its histograms and count maps are screened
 * again, with the rest, when each condition is merged like a fleet of its own (shards/merge).
 */
export function weatherProblem(r: Readonly<Record<string, unknown>>): string | undefined {
  const w = r.weather;
  if (w === undefined) return undefined;
  if (!isObj(w) || typeof w.spec !== 'string' || w.spec.length > 256 || typeof w.scale !== 'number' || !Array.isArray(w.conditions)) return 'weather is not {spec, scale, conditions[]}';
  if (w.conditions.length > CONDITIONS.length) return `weather has ${w.conditions.length} conditions, more than the ${CONDITIONS.length} known`;
  const seen = new Set<string>();
  const messages = isCount(r.totalMessages) ? r.totalMessages : 0;
  for (const c of w.conditions as unknown[]) {
    if (!isObj(c) || !(CONDITIONS as readonly unknown[]).includes(c.condition) || seen.has(c.condition as string)) return `weather condition ${JSON.stringify(isObj(c) ? c.condition : c)?.slice(0, 64)} is unknown or repeated`;
    seen.add(c.condition as string);
    for (const k of ['share', 'clients', 'proxies', 'expectedDeliveries', 'receivedDeliveries', 'lostDeliveries', 'unconfirmedDeliveries']) if (!isCount(c[k])) return `weather ${c.condition}.${k} is not an integer >= 0`;
    if ((c.expectedDeliveries as number) > (c.clients as number) * messages || (c.lostDeliveries as number) > (c.expectedDeliveries as number)) return `weather ${c.condition} delivers beyond its clients x messages`;
    if (!Array.isArray(c.disruptions) || c.disruptions.length > DISRUPTIONS.length) return `weather ${c.condition}.disruptions is not a list of at most ${DISRUPTIONS.length}`;
    for (const d of c.disruptions as unknown[]) {
      if (!isObj(d) || !(DISRUPTIONS as readonly unknown[]).includes(d.kind)) return `weather ${c.condition} has a disruption of unknown kind`;
      for (const k of ['events', 'affectedClients', 'undetected', 'unrecovered']) if (!isCount(d[k])) return `weather ${c.condition}.${String(d.kind)}.${k} is not an integer >= 0`;
      for (const k of ['detectMs', 'recoverMs']) {
        const s = d[k];
        if (!isObj(s) || !isCount(s.count) || !SPREAD_KEYS.every((q) => typeof s[q] === 'number' && Number.isFinite(s[q]) && (s[q] as number) >= 0)) return `weather ${c.condition}.${String(d.kind)}.${k} is not a spread`;
      }
      if (d.resumedPct !== null && !(typeof d.resumedPct === 'number' && d.resumedPct >= 0 && d.resumedPct <= 100)) return `weather ${c.condition}.${String(d.kind)}.resumedPct is not a share or null`;
    }
  }
  return undefined;
}
