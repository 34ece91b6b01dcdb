import type { OptionTable } from '../../lib/options.ts';
import { paramMismatches } from '../coordinator/params.ts';
import { HistogramDecoder } from './histogram-decode.ts';
import { histogramEnvelopeProblem } from './histogram-envelope.ts';
import { MERGE_PLAN, type MergePlan } from './plan.ts';
import { isObj, type ShardOutcome } from './types.ts';

const show = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 40 ? `${s.slice(0, 40)}...` : s;
};
/** A count a shard or a stored result may carry: safe integers only, so sums of them stay exact. */
export const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

export interface SchemaContext {
  /** The test asked of the shard (jitter, idle, ...). */
  test?: string;
  /**
   * What the test's result must carry for its figures to mean anything: its module's `summary`
   * (the coordinator's table of tests). A test that names fields also echoes its options as `params`.
   */
  required?: readonly string[];
  /** The query the shard was sent: the result's own `params` must mean the same. */
  asked?: Record<string, string>;
  table?: OptionTable;
  /** The runners' merge declarations: which fields are counts, rates, maps of counts (default MERGE_PLAN). */
  plan?: MergePlan;
}

/**
 * The first reason a shard's result cannot be merged, or undefined when it can. Checked before
 * anything adds up, so a malformed body is one shard's problem, never a crash of the run or a
 * figure that the target is blamed for. Never throws. Everything but the histogram's decoding,
 * which only screenOutcomes does (on a worker, under a deadline): a result passed here may still
 * be refused there.
 */
export function resultProblem(result: unknown, c: SchemaContext = {}): string | undefined {
  try {
    return check(result, c);
  } catch (err) {
    return `result could not be checked: ${(err as Error).message}`;
  }
}

function check(r: unknown, c: SchemaContext): string | undefined {
  if (!isObj(r)) return `result is ${Array.isArray(r) ? 'an array' : r === null ? 'null' : typeof r}, not an object`;
  const v = r.validity;
  if (!isObj(v)) return 'validity block missing';
  if (typeof v.valid !== 'boolean') return `validity.valid is ${show(v.valid)}, not a boolean`;
  if (!Array.isArray(v.flags)) return `validity.flags is ${show(v.flags)}, not an array`;
  for (const [i, f] of v.flags.entries()) {
    if (!isObj(f) || typeof f.code !== 'string' || (f.severity !== 'fatal' && f.severity !== 'warning') || typeof f.message !== 'string') return `validity.flags[${i}] is not {code, severity: fatal|warning, message}: ${show(f)}`;
  }
  if (v.valid && v.flags.some((f) => (f as { severity: string }).severity === 'fatal')) return 'validity.valid is true with a fatal flag';

  for (const k of c.required ?? []) if (r[k] === undefined) return `${k} missing (a ${c.test ?? 'this test\'s'} result carries it)`;
  // Declared counts: a string, a negative or a fraction here would add into a merged delivery of 200% that still reads "valid".
  const plan = c.plan ?? MERGE_PLAN;
  for (const k of plan.counts) if (r[k] !== undefined && !isCount(r[k])) return `${k} is ${show(r[k])}, not an integer >= 0`;
  for (const k of plan.nullableCounts) if (r[k] !== undefined && r[k] !== null && !isCount(r[k])) return `${k} is ${show(r[k])}, not an integer >= 0 or null`;
  for (const k of plan.nonNegative) {
    const x = r[k];
    if (x !== undefined && x !== null && !(typeof x === 'number' && Number.isFinite(x) && x >= 0)) return `${k} is ${show(x)}, not a number >= 0`;
  }
  for (const k of plan.countMaps) {
    const m = r[k];
    if (m === undefined) continue;
    if (!isObj(m)) return `${k} is ${show(m)}, not a map of counts`;
    for (const [cause, n] of Object.entries(m)) if (!isCount(n)) return `${k}.${cause} is ${show(n)}, not an integer >= 0`;
  }

  // Bounds: no shard can deliver more than every client got every message.
  const n = r as Record<string, number | undefined>;
  const clients = n.clients;
  const bound = (k: string, max: number | undefined, what: string) => (n[k] !== undefined && max !== undefined && n[k]! > max ? `${k} ${n[k]} exceeds ${what} ${max}` : undefined);
  const perClient = clients !== undefined && n.totalMessages !== undefined ? clients * n.totalMessages : undefined;
  const overs = [
    ...['connectedClients', 'connectFailures', 'initiallyConnected'].map((k) => bound(k, clients, 'clients')),
    bound('published', n.totalMessages, 'totalMessages'),
    bound('publishedMessages', n.totalMessages, 'totalMessages'),
    bound('expectedDeliveries', perClient, 'clients x messages'),
    bound('receivedDeliveries', perClient, 'clients x messages'),
    bound('lostDeliveries', n.expectedDeliveries, 'expectedDeliveries'),
    // Parts of received: an inflated one would hide a shard's over-100% rate from the merge.
    bound('unacceptedDeliveries', n.receivedDeliveries, 'receivedDeliveries'),
    n.unacceptedDeliveries !== undefined ? bound('unconfirmedDeliveries', n.unacceptedDeliveries, 'unacceptedDeliveries') : bound('unconfirmedDeliveries', n.receivedDeliveries, 'receivedDeliveries'),
    bound('perfectClients', clients, 'clients'),
    // The runners' own bounds (their merge declarations' `check`).
    ...plan.specs.map((s) => s.check?.(r)),
  ];
  const over = overs.find((x) => x !== undefined);
  if (over) return over;
  const hp = histogramProblem(r.latencyHistogram, perClient);
  if (hp) return hp;
  if (r.latencySamplesSorted !== undefined && !(Array.isArray(r.latencySamplesSorted) && r.latencySamplesSorted.every((x) => typeof x === 'number' && Number.isFinite(x)))) return 'latencySamplesSorted is not an array of numbers';

  const d = r.clockDrift;
  if (d !== undefined && !(isObj(d) && ['wallMs', 'monotonicMs', 'endStepMs', 'maxStepMs'].every((k) => typeof d[k] === 'number' && Number.isFinite(d[k])))) return `clockDrift is ${show(d)}, not {wallMs, monotonicMs, endStepMs, maxStepMs}`;

  if (c.asked) {
    const p = r.params;
    if (p === undefined) {
      if (c.required?.length) return 'params missing: the result does not say what it ran';
    } else if (!isObj(p)) return `params is ${show(p)}, not an object`;
    else {
      const diffs = paramMismatches(c.asked, p, c.table);
      if (diffs.length) return `result ran different parameters: ${diffs.map((d) => `${d.name} asked ${d.asked}, ran ${d.effective}`).join('; ')}`;
    }
  }
  return undefined;
}

function histogramProblem(h: unknown, maxCount: number | undefined): string | undefined {
  if (h === undefined) return undefined;
  if (!isObj(h)) return `latencyHistogram is ${show(h)}, not an encoded histogram`;
  if (typeof h.histogram !== 'string') return 'latencyHistogram.histogram is not a string';
  if (!isCount(h.count)) return `latencyHistogram.count is ${show(h.count)}, not an integer >= 0`;
  if (h.negatives !== undefined && !isCount(h.negatives)) return `latencyHistogram.negatives is ${show(h.negatives)}, not an integer >= 0`;
  for (const k of ['minUs', 'maxUs'] as const) if (typeof h[k] !== 'number' || !Number.isFinite(h[k])) return `latencyHistogram.${k} is ${show(h[k])}, not a number`;
  if (h.count > 0 && (h.minUs as number) > (h.maxUs as number)) return 'latencyHistogram.minUs exceeds maxUs';
  if (maxCount !== undefined && h.count > maxCount) return `latencyHistogram.count ${h.count} exceeds clients x messages ${maxCount}`;
  // Bounded before it starts: the library decodes only what this check let through (histogram-envelope.ts).
  return histogramEnvelopeProblem(h.histogram, h.count);
}

/**
 * Screen every finished shard before the merge: a result that fails the schema turns its shard
 * into `invalid` (result dropped, reason kept), so it is left out of every figure like a shard
 * that never answered and is named in SHARD_RESULT_INVALID. A histogram that passed the checks is
 * decoded here, once, on a worker under `decodeDeadlineMs` each (histogram-decode.ts); the shard's
 * result goes on carrying the library's re-encoding of it, so nothing after the screen decodes a
 * shard's own bytes.
 */
export async function screenOutcomes(outcomes: readonly ShardOutcome[], ctx: (o: ShardOutcome) => SchemaContext = () => ({}), decodeDeadlineMs?: number, plan?: MergePlan): Promise<ShardOutcome[]> {
  const decoder = new HistogramDecoder(decodeDeadlineMs);
  const invalid = (o: ShardOutcome, why: string): ShardOutcome => {
    const { result: _r, ...rest } = o;
    return { ...rest, status: 'invalid', error: `SHARD_RESULT_INVALID: ${why}` };
  };
  try {
    const out: ShardOutcome[] = [];
    for (const o of outcomes) {
      if (o.status !== 'done') {
        out.push(o);
        continue;
      }
      const why = o.result === undefined ? 'job done without a result' : resultProblem(o.result, { ...(plan ? { plan } : {}), ...ctx(o) });
      if (why) {
        out.push(invalid(o, why));
        continue;
      }
      const h = o.result!.latencyHistogram;
      if (!h) {
        out.push(o);
        continue;
      }
      const d = await decoder.decode(h.histogram);
      if ('problem' in d) out.push(invalid(o, d.problem));
      else if (d.total !== h.count) out.push(invalid(o, `latencyHistogram holds ${d.total} samples, its count says ${h.count}`));
      else out.push({ ...o, result: { ...o.result!, latencyHistogram: { ...h, histogram: d.histogram } } });
    }
    return out;
  } finally {
    await decoder.close();
  }
}
