import { fireRules, TARGET_MODULE_RULE } from '../../../engine/measure/validity.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { summarize } from '../../../engine/measure/latency.ts';
import type { Budget, ScenarioValidityFlag, StepResult } from '../types.ts';
import { publishBatches, messagesPerKey } from './batch-publisher.ts';
import type { LoaderGroup } from './loaders.ts';
import { percentilesMs } from './merge.ts';
import type { StepKey } from './messages.ts';
import { toRanges } from './plan.ts';
import { judgeStep, rigFlags, type RigLimits } from './rig.ts';
import { watchNodes, type TargetNodes } from './nodes.ts';
import { watchMachineCpu } from '../../../engine/measure/machine-cpu.ts';
import { runtimeProcesses } from '../../../engine/measure/target-usage.ts';

export interface StepPlan {
  /** What was stepped, for the StepResult (e.g. `{ publishRate: 4000 }`). */
  label: Record<string, number>;
  keys: (StepKey & { streamName: string })[];
  /** Subscribers that should get each message of a key (for the offered deliveries/s). */
  subscribersPerKey: number;
  ratePerSec: number;
  durationMs: number;
  drainMs: number;
  tickMs: number;
  payloadBytes: number;
  /** Publisher batches in flight per node at most. */
  maxInFlight: number;
  /** Loaders poll their sockets every this many ms during the step (0: woken per arrival). */
  loaderPollMs: number;
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * One step at one offered load: fresh ledgers in every loader, publish for the step's duration,
 * let deliveries drain, then settle what the publisher saw accepted and merge the loaders.
 * Judged against the budget; a failing step with a rig flag says the rig was the limit.
 */
export async function runStep(fleet: LoaderGroup, nodes: TargetNodes, p: StepPlan, budget: Budget, limits: RigLimits): Promise<{ result: StepResult; flags: ScenarioValidityFlag[] }> {
  await fleet.start(p.keys, messagesPerKey(p.ratePerSec, p.durationMs, p.keys.length), p.loaderPollMs);
  const usage = watchNodes(nodes.pids);
  const machineWatch = watchMachineCpu();
  const accepted: number[][] = p.keys.map(() => []);
  const pub = await publishBatches({ urls: nodes.urls, keys: p.keys, ratePerSec: p.ratePerSec, durationMs: p.durationMs, tickMs: p.tickMs, payloadBytes: p.payloadBytes, maxInFlight: p.maxInFlight, ...(nodes.publish ? { publish: nodes.publish } : {}), onAccepted: (k, seq) => accepted[k]!.push(seq) });
  // Server CPU over the publishing window only: the drain's idle seconds would dilute it.
  const target = usage.stop();
  const machine = machineWatch.stop();
  await sleep(p.drainMs);
  const merged = await fleet.settle(Object.fromEntries(p.keys.map((k, i) => [k.key, toRanges(accepted[i]!)])));
  const t = merged.totals;
  const delivered = t.receivedDeliveries - t.unacceptedDeliveries;
  const deliveredPct = t.expectedDeliveries ? r3((100 * delivered) / t.expectedDeliveries) : 0;
  const [p50, p99, p999] = percentilesMs(merged.latency, [50, 99, 99.9]) as [number, number, number];
  const rig = rigFlags({ ready: fleet.ready, step: merged, publisher: pub, machine: machine && nodes.pids.length ? { ...machine, targetCpuPct: target.cpuPct, targetProcesses: nodes.pids.length * nodes.workersPerNode } : null }, limits);
  const judged = judgeStep({ deliveredPct, p99Ms: p99, publishFailed: pub.failed }, budget, rig);
  const secs = Math.max(0.001, pub.elapsedMs / 1000);
  const result: StepResult = {
    step: p.label,
    pass: judged.pass,
    ...(judged.reason ? { reason: judged.reason } : {}),
    metrics: {
      offeredPerSec: p.ratePerSec,
      offeredDeliveriesPerSec: p.ratePerSec * p.subscribersPerKey,
      sent: pub.sent,
      published: pub.published,
      publishFailed: pub.failed,
      deliveriesPerSec: Math.round(delivered / secs),
      deliveredPct,
      p50Ms: p50,
      p99Ms: p99,
      p999Ms: p999,
      maxMs: merged.latency.maxUs / 1000,
      serverCpuPct: target.cpuPct,
      serverRssMb: target.rssMb,
      serverProcesses: nodes.pids.length ? nodes.pids.reduce((n, pid) => n + runtimeProcesses(pid).length, 0) : null,
      machineBusyPct: machine?.busyPct ?? null,
      loaders: fleet.size,
      loaderLagP99Ms: Math.max(0, ...merged.loaders.map((x) => x.loopLagP99Ms)),
      loaderCpuPct: Math.max(0, ...merged.loaders.map((x) => x.cpuPct)),
      publisherLateMaxMs: pub.tickLateMaxMs,
      openConnections: merged.open,
      disconnects: Object.values(merged.disconnects).reduce((a, b) => a + b, 0),
      limitedBy: judged.limitedBy,
      elapsedSec: r1(secs),
    },
    ledger: t,
    latency: summarize(merged.latency),
    latencyEncoded: merged.latency,
  };
  // A target file that broke the contract: the step's figures are the file's doing (fatal, named), not the target's.
  return { result, flags: [...fireRules([TARGET_MODULE_RULE], { targetModule: merged.targetModule }), ...judged.flags] };
}
