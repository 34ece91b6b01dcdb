import { medianOf } from '../../lib/figures.ts';
import { mulberry32 } from '../../lib/rng.ts';
import { DEFAULT_DRIFT_PCT, type BaselineSpec } from './schema.ts';

export type Verdict = 'ok' | 'improved' | 'drift' | 'regress' | 'missing' | 'new';
/** A test's verdict: its worst metric's, or what kept it from being judged. */
export type TestVerdict = Verdict | 'invalid' | 'failed';
/** Worst first: the test's verdict is its worst metric's. */
const SEVERITY: Record<TestVerdict, number> = { failed: 7, invalid: 6, regress: 5, drift: 4, missing: 3, new: 2, improved: 1, ok: 0 };

export interface MetricVerdict {
  path: string;
  direction: BaselineSpec['direction'];
  baseline: number | string | null;
  /** The measured value (the median of the runs with --repeat). */
  measured: number | string | null;
  /** All runs' values with --repeat. */
  runs?: number[];
  delta: number | null;
  deltaPct: number | null;
  /** --repeat: 95% bootstrap interval of the measured median minus the baseline. */
  interval?: [number, number];
  verdict: Verdict;
  reason: string;
}

/** Delivery rates regress on a one-point drop whatever their drift threshold (the benchmark's rule). */
const DELIVERY_POINTS = 1;
const isDelivery = (path: string) => /(^|\.)deliveryRate(OfConnected)?Pct$/.test(path);

export const getPath = (obj: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);

const round = (v: number, d = 3) => Math.round(v * 10 ** d) / 10 ** d;
/** lib/figures.ts's median; every caller passes runs or samples, never none (NaN then, as before). */
export const median = (xs: readonly number[]): number => medianOf(xs) ?? NaN;

/** How much worse `v` is than `base` (positive = worse), in the metric's own units. */
const worse = (dir: BaselineSpec['direction'], v: number, base: number) => (dir === 'lower' ? v - base : base - v);
export const pastHard = (b: BaselineSpec, v: number) => b.hardThreshold !== undefined && (b.direction === 'lower' ? v > b.hardThreshold : v < b.hardThreshold);
/** Worse by more than the drift threshold: a percentage of the baseline, or any worsening of a zero baseline. */
const pastDrift = (b: BaselineSpec, base: number, worseBy: number, testDrift: number) => {
  const pct = b.driftThresholdPct ?? testDrift;
  return base === 0 ? worseBy > 0 : (worseBy / Math.abs(base)) * 100 > pct;
};

/**
 * One run against a fixed baseline: regress past the hard threshold (or a delivery rate more than
 * one point under its baseline), drift past the drift threshold in the bad direction, improved
 * past it in the good one, else ok. Strings compare equal or drift.
 */
export function judgeOne(path: string, b: BaselineSpec, measured: unknown, testDrift = DEFAULT_DRIFT_PCT): MetricVerdict {
  const base = b.value;
  const v: MetricVerdict = { path, direction: b.direction, baseline: base, measured: null, delta: null, deltaPct: null, verdict: 'ok', reason: '' };
  if (typeof measured !== 'number' && typeof measured !== 'string') return { ...v, verdict: 'missing', reason: 'not in the result' };
  v.measured = measured;
  if (typeof measured === 'string' || typeof base === 'string') {
    const same = String(measured) === String(base);
    return { ...v, verdict: base === null ? 'new' : same ? 'ok' : 'drift', reason: same ? 'equal' : base === null ? 'no baseline yet' : 'differs' };
  }
  if (pastHard(b, measured)) return { ...v, ...deltas(measured, base), verdict: 'regress', reason: `past the hard threshold ${b.hardThreshold}` };
  if (base === null) return { ...v, verdict: 'new', reason: 'no baseline yet (run with --update)' };
  const d = deltas(measured, base);
  const w = worse(b.direction, measured, base);
  if (isDelivery(path) && measured < base - DELIVERY_POINTS) return { ...v, ...d, verdict: 'regress', reason: `more than ${DELIVERY_POINTS} point under the baseline` };
  if (pastDrift(b, base, w, testDrift)) return { ...v, ...d, verdict: 'drift', reason: `worse than the ${b.driftThresholdPct ?? testDrift}% drift threshold` };
  if (pastDrift(b, base, -w, testDrift)) return { ...v, ...d, verdict: 'improved', reason: 'better than the drift threshold: consider --update' };
  return { ...v, ...d, verdict: 'ok', reason: 'within the drift threshold' };
}

function deltas(measured: number, base: number | null) {
  if (base === null) return { delta: null, deltaPct: null };
  return { delta: round(measured - base), deltaPct: base === 0 ? null : round(((measured - base) / Math.abs(base)) * 100, 2) };
}

/** 95% percentile-bootstrap interval of median(xs) − median(ys) (ys may be one fixed value); seeded, so a verdict is reproducible. */
export function bootstrapMedianDiff(xs: readonly number[], ys: readonly number[], resamples = 2000, seed = 1): [number, number] {
  const rng = mulberry32(seed);
  const draw = (a: readonly number[]) => median(Array.from({ length: a.length }, () => a[Math.floor(rng() * a.length)]!));
  const diffs = Array.from({ length: resamples }, () => draw(xs) - (ys.length === 1 ? ys[0]! : draw(ys))).sort((a, b) => a - b);
  return [diffs[Math.floor(0.025 * (resamples - 1))]!, diffs[Math.ceil(0.975 * (resamples - 1))]!];
}

/**
 * K runs against the baseline's stored runs (or its value): the same rules as `judgeOne`, applied
 * to the most favourable end of the bootstrap interval, so only a shift that the noise cannot
 * explain goes yellow or red. Repeated runs of an unchanged tree land inside the interval.
 */
export function judgeRepeat(path: string, b: BaselineSpec, runs: readonly unknown[], testDrift = DEFAULT_DRIFT_PCT): MetricVerdict {
  const nums = runs.filter((x): x is number => typeof x === 'number');
  if (nums.length !== runs.length || nums.length === 0 || typeof b.value === 'string') {
    const one = judgeOne(path, b, runs.find((x) => x !== undefined), testDrift);
    return nums.length === runs.length ? one : { ...one, verdict: 'missing', reason: `${runs.length - nums.length} of ${runs.length} runs lack it` };
  }
  const m = median(nums);
  if (b.value === null) return { ...judgeOne(path, b, m, testDrift), runs: nums };
  const ref = b.samples && b.samples.length >= 2 ? b.samples : [b.value];
  const [lo, hi] = bootstrapMedianDiff(nums, ref);
  const refMedian = median(ref);
  // Most favourable plausible measured value: judge that one.
  const best = b.direction === 'lower' ? refMedian + lo : refMedian + hi;
  const worst = b.direction === 'lower' ? refMedian + hi : refMedian + lo;
  const onBest = judgeOne(path, { ...b, value: refMedian }, best, testDrift);
  const onWorst = judgeOne(path, { ...b, value: refMedian }, worst, testDrift);
  const out: MetricVerdict = { ...judgeOne(path, b, m, testDrift), runs: nums, interval: [round(lo), round(hi)] };
  // A hard threshold is absolute: the measured median past it regresses whatever the interval says.
  if (pastHard(b, m)) return { ...out, verdict: 'regress', reason: `past the hard threshold ${b.hardThreshold}` };
  if (onBest.verdict === 'regress' || onBest.verdict === 'drift') return { ...out, verdict: onBest.verdict, reason: `${onBest.reason}, even at the favourable end of the 95% interval` };
  if (onWorst.verdict === 'improved') return { ...out, verdict: 'improved', reason: 'better at the unfavourable end of the 95% interval: consider --update' };
  return { ...out, verdict: 'ok', reason: 'the 95% interval reaches the baseline side of the thresholds' };
}

export function worstOf(vs: readonly TestVerdict[]): TestVerdict {
  return vs.reduce<TestVerdict>((w, v) => (SEVERITY[v] > SEVERITY[w] ? v : w), 'ok');
}
