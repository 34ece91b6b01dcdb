import { randomSeed } from '../../lib/rng.ts';
import { summarize, type EncodedLatency, type LatencyReport } from '../measure/latency.ts';
import type { ConnectionSummary } from '../measure/connections.ts';
import type { LedgerTotals } from '../measure/ledger.ts';
import type { RunnerHealth } from '../measure/runner-health.ts';
import type { LossReport } from '../measure/client-timelines.ts';
import type { PublisherResult } from '../measure/publisher.ts';
import type { RunSession } from './session.ts';
import type { MergeSpec } from './module.ts';
import { mergeTargetModuleReports, targetModuleField, targetModuleProblem, type TargetModuleReport } from '../targets/user-module.ts';
import { fireRules, TARGET_MODULE_RULE } from '../measure/validity.ts';

/** a / b as a percentage with four decimals; 0 when b is 0. The one copy every result uses. */
export const pct = (a: number, b: number): number => (b > 0 ? Math.round((a / b) * 1e6) / 1e4 : 0);

/**
 * A run's identity: its seed (0 picks one), start, id (given, or `<target>-<start>-<seed>`) and
 * stream (given, or `<test>-<runId>`), and the fields a result opens with over them.
 */
export function runIdentity<Test extends string, O extends { seed: number; stream: string; runId?: string }>(test: Test, target: string, o: O) {
  const seed = o.seed || randomSeed();
  const startedAt = new Date();
  const runId = o.runId || `${target}-${startedAt.getTime().toString(36)}-${seed}`;
  const stream = o.stream || `${test}-${runId}`;
  return { seed, runId, stream, head: { test, target, runId, seed, stream, startedAt: startedAt.toISOString(), params: { ...o, seed } } };
}

/**
 * The fields every publish-and-listen result declares alike (jitter, throughput, avalanche,
 * deploy-impact), in the benchmark's names; each result adds its own. The delivery counts are the
 * ledger's totals under the same names (expected: clients × published, the benchmark's M × N).
 */
export interface RunFields extends LatencyReport, Omit<ConnectionSummary, 'lateConnects'>, Pick<LedgerTotals, 'expectedDeliveries' | 'receivedDeliveries' | 'lostDeliveries' | 'duplicates' | 'outOfOrder'> {
  target: string;
  runId: string;
  stream: string;
  startedAt: string;
  clients: number;
  /** Messages the run planned to publish. */
  totalMessages: number;
  /** Messages the target accepted (HTTP 201): only these are expected at the clients. */
  published: number;
  /** Messages the target did not accept: the publisher's failures, never counted as the target's delivery loss. */
  publishFailures: number;
  /** The first 20 publisher failures, `seq <n>: <cause>`. */
  publishFailureSamples: string[];
  /** receivedDeliveries / expectedDeliveries, %. */
  deliveryRatePct: number;
  /** Arrivals that were not this run's payloads (another run on the stream, corrupt data). */
  foreignMessages: number;
  latencyHistogram: EncodedLatency;
  runnerPeakRssMb: number;
  runner: RunnerHealth;
  elapsedMs: number;
  plannedMs: number;
  /** Present when the target is a user's target file: the file and its hooks' faults (TARGET_MODULE_FAULT). */
  targetModule?: TargetModuleReport;
}

/**
 * The delivery part every publish-and-listen result carries, in the benchmark's field names, from
 * the session's ledger, latency recorder and connection book. `totals`: the ledger's, when the
 * caller has them already (one pass over clients x messages is enough).
 */
export function deliveryFields(s: RunSession, published: number, totals: LedgerTotals = s.ledger.totals()) {
  // `counts`: expected, received, lost, unaccepted and unconfirmed deliveries, in the ledger's (and the result's) order.
  const { duplicates, outOfOrder, foreign, perfectClients, ...counts } = totals;
  const connects = s.book.summary();
  const enc = s.latency.encode();
  return {
    ...targetModuleField(s.clients),
    clients: s.clients.length,
    ...connects,
    ...counts,
    // A message of unknown publish outcome is not expected, so its arrivals stay out of the rates.
    deliveryRatePct: pct(counts.receivedDeliveries - counts.unconfirmedDeliveries, counts.expectedDeliveries),
    deliveryRateOfConnectedPct: pct(counts.receivedDeliveries - counts.unconfirmedDeliveries, connects.connectedClients * published),
    duplicates,
    outOfOrder,
    foreignMessages: s.foreign + foreign,
    perfectClients,
    ...summarize(enc),
    latencyHistogram: enc,
  };
}

/** How `deliveryFields` and the RunFields every publish-and-listen result carries add up over shards. */
export const DELIVERY_MERGE: MergeSpec = {
  sum: ['clients', 'connectedClients', 'connectFailures', 'expectedDeliveries', 'receivedDeliveries', 'lostDeliveries', 'unacceptedDeliveries', 'unconfirmedDeliveries', 'duplicates', 'outOfOrder', 'foreignMessages', 'perfectClients', 'publishFailures'],
  max: ['elapsedMs', 'plannedMs', 'runnerPeakRssMb', 'totalMessages'],
  countMaps: ['connectFailureCauses', 'disconnectReasons'],
  counts: [
    'clients', 'connectedClients', 'connectFailures', 'lateConnects', 'totalMessages', 'published', 'publishFailures', 'expectedDeliveries', 'receivedDeliveries', 'lostDeliveries',
    'unacceptedDeliveries', 'unconfirmedDeliveries', 'duplicates', 'outOfOrder', 'foreignMessages', 'perfectClients',
  ],
  nonNegative: ['deliveryRatePct', 'elapsedMs', 'plannedMs', 'runnerPeakRssMb'],
  // A user's target file (`targetModule`): screened, its faults summed by hook over the shards, and
  // the run's own rule applied to the sum, so one shard's faults make the fleet's figures the file's.
  check: (r) => (r.targetModule === undefined ? undefined : targetModuleProblem(r.targetModule)),
  derive: (merged, shards) => {
    const report = mergeTargetModuleReports(shards.flatMap((s) => (s.result.targetModule === undefined ? [] : [s.result.targetModule as TargetModuleReport])));
    if (report) merged.targetModule = report;
  },
  rules: (merged) => fireRules([TARGET_MODULE_RULE], merged as { targetModule?: TargetModuleReport }),
};
/** The runner's own health and the run's time against its plan (the OVERRAN_PLAN rule's inputs), as every result ends them. */
export const runFields = (runner: RunnerHealth, elapsedMs: number, plannedMs: number) => ({ runnerPeakRssMb: runner.runnerPeakRssMb, runner, elapsedMs, plannedMs });

/** The publisher's part, in the jitter result's names. */
export const publisherFields = (p: PublisherResult) => ({ published: p.published, publishFailures: p.failed, publishFailureCauses: p.failureCauses, publishFailureSamples: p.failures });

/**
 * Why every lost delivery was lost (engine/measure/loss-causes.ts: from the client's own timeline
 * and the message's publisher window), how every reconnect resumed (session_restored,
 * history_filled, rejected:<cause>, nothing_to_resume, not_attempted), live vs replayed (answered
 * while that client was down), and the late split (RunSession.lossReport), as a result type
 * carries them: the jitter result's field names, optional since older results lack them.
 */
export type LossSummary = Partial<LossReport>;

/**
 * How a LossSummary adds up over shards: causes and resume outcomes key by key, replayed
 * deliveries summed, so the fleet's causes add up to its lost deliveries as each shard's do.
 */
export const LOSS_MERGE: MergeSpec = {
  sum: ['replayedDeliveries'],
  counts: ['replayedDeliveries'],
  countMaps: ['lossByCause', 'resumeOutcomes'],
};

/** f summed over xs (a count over several results, workers or rooms). */
export const sum = <T>(xs: readonly T[], f: (x: T) => number): number => xs.reduce((a, x) => a + f(x), 0);

/** Counts by key (causes, outcomes, reasons) summed over several results. */
export function addMaps(ms: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of ms) for (const [k, v] of Object.entries(m)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** Sum of several loss reports (a runner with one ledger per room, workers): the late split's p99 is the highest part's. */
export function mergeLoss(parts: LossReport[]): LossReport {
  const p99s = parts.map((p) => p.lateDeliveries.liveP99Ms).filter((v): v is number => v !== null);
  return {
    lossByCause: addMaps(parts.map((p) => p.lossByCause as Record<string, number>)) as LossReport['lossByCause'],
    resumeOutcomes: addMaps(parts.map((p) => p.resumeOutcomes)),
    replayedDeliveries: sum(parts, (p) => p.replayedDeliveries),
    lateDeliveries: { liveP99Ms: p99s.length ? Math.max(...p99s) : null, late: sum(parts, (p) => p.lateDeliveries.late), byPath: addMaps(parts.map((p) => p.lateDeliveries.byPath)) },
  };
}
