import type { Budget, ScenarioValidityFlag } from '../types.ts';
import type { MergedReady, MergedStep } from './merge.ts';

/**
 * When the rig, not the target, was the limit. Loaders and target share this machine's cores: a
 * loader whose event loop stalls stamps arrivals late (latency the target did not cause), a
 * loader pinned at a full core cannot read faster, a publisher behind schedule offers less than
 * the step claims, and out of descriptors or ports the connections were never the target's to
 * refuse. A step that fails its budget while any of these fired is blamed on the rig.
 */
export interface RigLimits {
  /** A loader's event-loop lag p99 above this (ms) inflates the measured latency. */
  maxLoaderLagMs: number;
  /** A loader above this share of one core (%) is saturated. */
  maxLoaderCpuPct: number;
  /** The publisher sent less than this share (%) of the messages due. */
  minSentPct: number;
  /** Publisher ticks later than this (ms) behind schedule: the runner's own loop stalled. */
  maxPublisherLateMs: number;
  /** The whole machine below this idle share (%) while the target had CPU to spare: the machine ran out, not the target. */
  minMachineIdlePct: number;
}

export const DEFAULT_RIG_LIMITS: RigLimits = { maxLoaderLagMs: 25, maxLoaderCpuPct: 90, minSentPct: 98, maxPublisherLateMs: 100, minMachineIdlePct: 5 };

export interface RigObservation {
  ready: MergedReady;
  step: Pick<MergedStep, 'loaders'>;
  publisher: { offered: number; sent: number; tickLateMaxMs: number };
  /** Whole-machine CPU over the publishing window and the target's own (every process of its nodes); absent where unmeasured. `targetProcesses`: the processes that serve (nodes x workers), each able to use one core. */
  machine?: { idlePct: number; cores: number; targetCpuPct: number | null; targetProcesses: number } | null;
}

/** A target process at this share of one core is itself saturated: then a busy machine is not the rig's fault. */
const TARGET_SATURATED_PCT = 90;

/** The rig flags one step raised (severity decided by judgeStep: fatal only if the step failed). */
export function rigFlags(o: RigObservation, l: RigLimits): ScenarioValidityFlag[] {
  const out: ScenarioValidityFlag[] = [];
  const lagging = o.step.loaders.filter((x) => x.loopLagP99Ms > l.maxLoaderLagMs);
  if (lagging.length) out.push({ code: 'RIG_LOADER_LOOP_LAG', severity: 'warning', message: `loader event-loop lag p99 ${lagging.map((x) => `${x.loopLagP99Ms} ms (loader ${x.loader})`).join(', ')} > ${l.maxLoaderLagMs} ms: arrivals were stamped late by the rig` });
  const hot = o.step.loaders.filter((x) => x.cpuPct > l.maxLoaderCpuPct);
  if (hot.length) out.push({ code: 'RIG_LOADER_CPU', severity: 'warning', message: `loader CPU ${hot.map((x) => `${x.cpuPct}% (loader ${x.loader})`).join(', ')} > ${l.maxLoaderCpuPct}% of a core: the loader was saturated` });
  const sentPct = o.publisher.offered ? (100 * o.publisher.sent) / o.publisher.offered : 100;
  if (sentPct < l.minSentPct || o.publisher.tickLateMaxMs > l.maxPublisherLateMs)
    out.push({ code: 'RIG_PUBLISHER_BEHIND', severity: 'warning', message: `publisher sent ${o.publisher.sent}/${o.publisher.offered} messages due (${Math.round(sentPct * 10) / 10}%), ticks up to ${o.publisher.tickLateMaxMs} ms late: the offered rate was not offered` });
  const m = o.machine;
  if (m && m.idlePct < l.minMachineIdlePct && (m.targetCpuPct === null || m.targetCpuPct < TARGET_SATURATED_PCT * m.targetProcesses))
    out.push({ code: 'RIG_MACHINE_CPU', severity: 'warning', message: `the machine was ${Math.round((100 - m.idlePct) * 10) / 10}% busy over its ${m.cores} cores (idle ${m.idlePct}% < ${l.minMachineIdlePct}%) while the target used ${m.targetCpuPct ?? '?'}% (under ${TARGET_SATURATED_PCT}% of a core per serving process): loaders, publisher, kernel and neighbours took the CPU the target could have used` });
  if (o.ready.rigLimitFailures > 0) out.push({ code: 'RIG_CONNECT_LIMIT', severity: 'warning', message: `${o.ready.rigLimitFailures} connections failed on the runner's own fd or port limit (${JSON.stringify(o.ready.failureCauses)})` });
  return out;
}

/** Connections the target did not seat: the target's doing unless the rig ran out of fds/ports. */
export function subscribeFlag(ready: MergedReady, minPct: number): ScenarioValidityFlag | undefined {
  const pct = ready.requested ? (100 * ready.subscribed) / ready.requested : 100;
  return pct < minPct ? { code: 'NOT_ALL_SUBSCRIBED', severity: 'warning', message: `${ready.subscribed}/${ready.requested} connections subscribed (${Math.round(pct * 100) / 100}%); causes ${JSON.stringify(ready.failureCauses)}` } : undefined;
}

export interface Judged {
  pass: boolean;
  reason?: string;
  /** Who set the limit at a failing step. */
  limitedBy: 'target' | 'rig' | null;
  flags: ScenarioValidityFlag[];
}

/** The budget (seeds/000): >= minDeliveredPct delivered and the merged p99 <= maxP99Ms. */
export function judgeStep(m: { deliveredPct: number; p99Ms: number; publishFailed: number }, budget: Budget, rig: ScenarioValidityFlag[]): Judged {
  const why: string[] = [];
  if (m.deliveredPct < budget.minDeliveredPct) why.push(`delivered ${m.deliveredPct}% < ${budget.minDeliveredPct}%`);
  if (m.p99Ms > budget.maxP99Ms) why.push(`p99 ${m.p99Ms} ms > ${budget.maxP99Ms} ms`);
  if (m.publishFailed > 0) why.push(`target refused ${m.publishFailed} publishes`);
  const pass = why.length === 0;
  if (pass) return { pass, limitedBy: null, flags: rig };
  const rigLimited = rig.length > 0;
  return {
    pass,
    reason: rigLimited ? `the rig was the limit (${rig.map((f) => f.code).join(', ')}): ${why.join('; ')}` : why.join('; '),
    limitedBy: rigLimited ? 'rig' : 'target',
    flags: rig.map((f) => ({ ...f, severity: 'fatal' as const })),
  };
}
