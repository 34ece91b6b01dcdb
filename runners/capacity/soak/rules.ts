import { medianOf } from '../../../lib/figures.ts';
import type { LedgerTotals } from '../../../engine/measure/ledger.ts';
import type { ScenarioValidityFlag } from '../types.ts';
import type { SoakThresholds } from './options.ts';

/**
 * The soak's hard pass/fail rules (seeds/002: no throughput decay, flat memory, stable latency,
 * no unexpected disconnects; plus nothing lost). Pure: a health series and thresholds in, verdicts
 * out, so synthetic series are judged exactly like measured ones.
 */

/** One health window, as run.ts samples it every `sampleSec`. */
export interface HealthSample {
  /** End of the window, seconds since publishing began. */
  tSec: number;
  windowSec: number;
  /** First deliveries (ledger 'new') arriving in the window. */
  deliveries: number;
  deliveriesPerSec: number;
  /** Messages the target accepted in the window. */
  accepted: number;
  /** Latency probe: percentiles of the window's first deliveries (null when none arrived). */
  p50Ms: number | null;
  p99Ms: number | null;
  /** Target RSS at the window's end (null when the target could not be sampled). */
  rssMb: number | null;
  cpuPct: number | null;
  /** Clients connected and subscribed at the window's end. */
  connected: number;
  /** Disconnects the runner did not cause, in the window. */
  unexpectedDisconnects: number;
  reconnects: number;
  /** The runner's own event-loop lag in the window (runner-health.ts recentLag). */
  rigLagP99Ms: number;
  rigLagMaxMs: number;
}

type RuleId = 'throughput' | 'memory' | 'latency' | 'disconnects' | 'delivery';

interface RuleVerdict {
  rule: RuleId;
  /** `insufficient`: the series is too short to judge this rule's figure (memory: a slope over under `minSlopeSpanSec`). */
  status: 'pass' | 'fail' | 'unmeasured' | 'insufficient';
  /** The figure judged, and the bound it was held to (same unit). */
  value: number | null;
  bound: number | null;
  unit: string;
  message: string;
}

/** Whole-run delivery figures from the one DeliveryLedger. */
export type DeliveryTotals = Pick<LedgerTotals, 'lostDeliveries' | 'duplicates'> & { deliveredPct: number };

/** `insufficient_duration`: nothing failed, but a rule needs a longer series to be judged (docs/soak.md). */
type SoakVerdict = 'pass' | 'fail' | 'inconclusive' | 'insufficient_duration';

export interface SoakJudgement {
  verdict: SoakVerdict;
  rules: RuleVerdict[];
  /** Indexes into the series: judged windows (after warm-up), their early and late thirds, rig-lagged windows. */
  judged: number[];
  early: number[];
  late: number[];
  rigLagged: number[];
  /** Least-squares fit of RSS over the judged windows (drawn in the report), null when unmeasured. */
  rssFit: { slopeMbPerMin: number; interceptMb: number; fromSec: number; toSec: number } | null;
  /** Anchors for the report's reference lines. */
  earlyThroughput: number | null;
  earlyP99Ms: number | null;
  flags: ScenarioValidityFlag[];
}

export const r2 = (v: number) => Math.round(v * 100) / 100;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** lib/figures.ts's median; the latency rule calls it only on windows it has (NaN for none, as before). */
const median = (xs: readonly number[]): number => medianOf(xs) ?? NaN;

/** Ordinary least squares y = a + b·x; null below two distinct x. */
export function leastSquares(xs: readonly number[], ys: readonly number[]): { slope: number; intercept: number } | null {
  if (xs.length < 2) return null;
  const mx = mean(xs);
  const my = mean(ys);
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx };
}

function throughputRule(s: readonly HealthSample[], early: number[], late: number[], t: SoakThresholds): RuleVerdict {
  const e = mean(early.map((i) => s[i]!.deliveriesPerSec));
  const l = mean(late.map((i) => s[i]!.deliveriesPerSec));
  const bound = t.maxThroughputDecayPct;
  if (e <= 0) return { rule: 'throughput', status: 'fail', value: null, bound, unit: '% decay', message: 'no deliveries in the early judged windows' };
  const decay = r2((1 - l / e) * 100);
  const ok = decay <= bound;
  return { rule: 'throughput', status: ok ? 'pass' : 'fail', value: decay, bound, unit: '% decay', message: `late ${Math.round(l)}/s vs early ${Math.round(e)}/s deliveries: ${decay > 0 ? `${decay}% lower` : `${r2(-decay)}% higher`} (at most ${bound}% lower allowed)` };
}

function memoryRule(s: readonly HealthSample[], judged: number[], t: SoakThresholds): { v: RuleVerdict; fit: SoakJudgement['rssFit'] } {
  const pts = judged.filter((i) => s[i]!.rssMb !== null);
  const bound = t.maxRssSlopeMbPerMin;
  const fit = pts.length >= 3 ? leastSquares(pts.map((i) => s[i]!.tSec / 60), pts.map((i) => s[i]!.rssMb!)) : null;
  if (!fit) return { v: { rule: 'memory', status: 'unmeasured', value: null, bound, unit: 'MB/min', message: `target RSS sampled in ${pts.length} judged windows; 3 needed for a slope` }, fit: null };
  const fromSec = s[pts[0]!]!.tSec;
  const toSec = s[pts[pts.length - 1]!]!.tSec;
  const growth = fit.slope * ((toSec - fromSec) / 60);
  // Significant digits, not decimals: a flat soak's slope would round to 0 and hide its size.
  const slope = Number(fit.slope.toPrecision(3));
  // A short soak extrapolates GC noise into a steep slope: growth within the noise band is flat.
  const ok = fit.slope <= bound || growth <= t.rssNoiseMb;
  // Flat is flat at any length; growing is only a leak over a span long enough to fit a slope: a
  // 30 s soak turns the heap settling after warm-up into tens of MB/min.
  const tooShort = !ok && toSec - fromSec < t.minSlopeSpanSec;
  const why = fit.slope <= bound
    ? `at most ${bound} MB/min allowed`
    : growth <= t.rssNoiseMb
      ? `above ${bound} MB/min, but the fitted growth ${r2(growth)} MB is within the ${t.rssNoiseMb} MB noise band`
      : tooShort
        ? `above ${bound} MB/min, but over only ${r2(toSec - fromSec)} s of judged windows: too short to judge a slope (at least ${t.minSlopeSpanSec} s, --min-slope-span-sec; soak longer)`
        : `above ${bound} MB/min, fitted growth ${r2(growth)} MB over ${r2((toSec - fromSec) / 60)} min`;
  return {
    v: { rule: 'memory', status: ok ? 'pass' : tooShort ? 'insufficient' : 'fail', value: slope, bound, unit: 'MB/min', message: `RSS slope ${slope} MB/min (${why})` },
    fit: { slopeMbPerMin: fit.slope, interceptMb: fit.intercept, fromSec, toSec },
  };
}

function latencyRule(s: readonly HealthSample[], early: number[], late: number[], lagged: Set<number>, t: SoakThresholds): { v: RuleVerdict; earlyP99: number | null } {
  const clean = (ix: number[]) => ix.filter((i) => !lagged.has(i) && s[i]!.p99Ms !== null).map((i) => s[i]!.p99Ms!);
  const e = clean(early);
  const l = clean(late);
  if (e.length === 0 || l.length === 0) return { v: { rule: 'latency', status: 'unmeasured', value: null, bound: null, unit: 'ms p99', message: `no latency probe in the ${e.length === 0 ? 'early' : 'late'} judged windows outside rig lag` }, earlyP99: e.length ? median(e) : null };
  const em = median(e);
  const lm = median(l);
  const bound = r2(em * (1 + t.maxP99GrowthPct / 100) + t.p99SlackMs);
  const ok = lm <= bound;
  return { v: { rule: 'latency', status: ok ? 'pass' : 'fail', value: r2(lm), bound, unit: 'ms p99', message: `late median window p99 ${r2(lm)} ms vs early ${r2(em)} ms (at most ${bound} ms = early +${t.maxP99GrowthPct}% +${t.p99SlackMs} ms)` }, earlyP99: em };
}

/** Judge a health series. `delivery` is the whole run's ledger figures. */
export function judgeSoak(series: readonly HealthSample[], delivery: DeliveryTotals, t: SoakThresholds): SoakJudgement {
  const flags: ScenarioValidityFlag[] = [];
  const judged = series.map((_, i) => i).filter((i) => series[i]!.tSec > t.warmupSec);
  const k = Math.max(1, Math.floor(judged.length / 3));
  const early = judged.slice(0, k);
  const late = judged.slice(-k);
  const rigLagged = judged.filter((i) => series[i]!.rigLagP99Ms > t.maxRigLagMs);
  if (judged.length < 3) flags.push({ code: 'SOAK_TOO_SHORT', severity: 'fatal', message: `${judged.length} health windows after the ${t.warmupSec} s warm-up; the rules need at least 3 (an early and a late third)` });
  if (rigLagged.length > 0) {
    // A lagging runner stamps arrivals late and can miss pings: the rig's problem, not the target's.
    const many = rigLagged.length * 2 > judged.length;
    flags.push({
      code: 'SOAK_RIG_LAG',
      severity: many ? 'fatal' : 'warning',
      message: `the runner's event loop lagged over ${t.maxRigLagMs} ms (p99) in ${rigLagged.length} of ${judged.length} judged windows (at ${rigLagged.map((i) => `${series[i]!.tSec}s`).join(', ')}); ${many ? 'too many to judge the target' : 'those windows are left out of the latency rule'}`,
    });
  }
  const rules: RuleVerdict[] = [];
  let rssFit: SoakJudgement['rssFit'] = null;
  let earlyP99Ms: number | null = null;
  let earlyThroughput: number | null = null;
  if (judged.length > 0) {
    rules.push(throughputRule(series, early, late, t));
    earlyThroughput = mean(early.map((i) => series[i]!.deliveriesPerSec));
    const m = memoryRule(series, judged, t);
    rules.push(m.v);
    rssFit = m.fit;
    const l = latencyRule(series, early, late, new Set(rigLagged), t);
    rules.push(l.v);
    earlyP99Ms = l.earlyP99;
  }
  const disc = series.reduce((a, x) => a + x.unexpectedDisconnects, 0);
  rules.push({ rule: 'disconnects', status: disc <= t.maxUnexpectedDisconnects ? 'pass' : 'fail', value: disc, bound: t.maxUnexpectedDisconnects, unit: 'disconnects', message: `${disc} unexpected disconnects over the soak (at most ${t.maxUnexpectedDisconnects} allowed)` });
  rules.push({
    rule: 'delivery',
    status: delivery.deliveredPct >= t.minDeliveredPct ? 'pass' : 'fail',
    value: delivery.deliveredPct,
    bound: t.minDeliveredPct,
    unit: '% delivered',
    message: `${delivery.deliveredPct}% delivered (${delivery.lostDeliveries} lost, ${delivery.duplicates} duplicates; at least ${t.minDeliveredPct}% required)`,
  });
  const unmeasured = rules.filter((r) => r.status === 'unmeasured');
  if (unmeasured.length) flags.push({ code: 'SOAK_RULE_UNMEASURED', severity: 'warning', message: `not judged: ${unmeasured.map((r) => `${r.rule} (${r.message})`).join('; ')}` });
  const fatal = flags.some((f) => f.severity === 'fatal');
  const verdict: SoakVerdict = fatal ? 'inconclusive' : rules.some((r) => r.status === 'fail') ? 'fail' : rules.some((r) => r.status === 'insufficient') ? 'insufficient_duration' : unmeasured.length ? 'inconclusive' : 'pass';
  return { verdict, rules, judged, early, late, rigLagged, rssFit, earlyThroughput, earlyP99Ms, flags };
}
