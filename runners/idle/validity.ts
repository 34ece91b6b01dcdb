import { judge, LOOP_LAG_WARN_MS, TARGET_MODULE_RULE, type ValidityRule } from '../../engine/measure/validity.ts';
import type { TargetModuleReport } from '../../engine/targets/user-module.ts';

export type IdleValidityCode = 'NOTHING_CONNECTED' | 'RUNNER_FD_LIMIT' | 'RUNNER_PORT_EXHAUSTION' | 'CONNECT_FAILURES' | 'RUNNER_LOOP_LAG' | 'HOLD_DISCONNECTS' | 'TARGET_METRICS_UNAVAILABLE' | 'TARGET_MEMORY_INCOMPLETE' | 'TARGET_MODULE_FAULT';

export interface IdleValidityInput {
  clients: number;
  subscribed: number;
  failed: number;
  failureCauses: Record<string, number>;
  disconnectedDuringHold: Record<string, number>;
  runnerLoopLagP99Ms: number;
  targetSamples: number;
  /** Why the target's memory figure misses part of the target (null: it saw the whole target). */
  targetMemoryIncomplete?: string | null;
  /** A user's target file: its clients' hook faults over every worker. */
  targetModule?: TargetModuleReport;
}

const fdFailures = (r: IdleValidityInput) => r.failureCauses.fd_limit ?? 0;
const portFailures = (r: IdleValidityInput) => r.failureCauses.port_exhaustion ?? 0;
const holdLost = (r: IdleValidityInput) => Object.values(r.disconnectedDuringHold).reduce((a, b) => a + b, 0);

/**
 * Idle validity: the runner's own limits are named as such (fatal: the count says nothing about
 * the target), target-side failures and losses are warnings with their share.
 */
export const IDLE_RULES: readonly ValidityRule<IdleValidityInput, IdleValidityCode>[] = [
  // First: when a target file broke the contract, its failed connects are the file's doing.
  TARGET_MODULE_RULE,
  { code: 'NOTHING_CONNECTED', severity: 'fatal', check: (r) => (r.subscribed === 0 ? 'no client subscribed' : undefined) },
  { code: 'RUNNER_FD_LIMIT', severity: 'fatal', check: (r) => (fdFailures(r) > 0 ? `${fdFailures(r)} connections failed because a runner worker ran out of file descriptors (EMFILE/ENFILE): the runner's limit, not the target's; use more workers (workers=auto) or shards` : undefined) },
  { code: 'RUNNER_PORT_EXHAUSTION', severity: 'fatal', check: (r) => (portFailures(r) > 0 ? `${portFailures(r)} connections failed because the runner ran out of local ports or source addresses (EADDRNOTAVAIL/EADDRINUSE): the runner's limit, not the target's; raise addresses` : undefined) },
  {
    code: 'CONNECT_FAILURES',
    severity: 'warning',
    check: (r) => {
      const targetFailures = r.failed - fdFailures(r) - portFailures(r);
      return r.clients > 0 && targetFailures / r.clients >= 0.01 ? `${targetFailures} of ${r.clients} connections (${((targetFailures / r.clients) * 100).toFixed(1)}%) failed at the target or timed out` : undefined;
    },
  },
  { code: 'HOLD_DISCONNECTS', severity: 'warning', check: (r) => (holdLost(r) > 0 ? `${holdLost(r)} subscribed connections were lost during the hold (${JSON.stringify(r.disconnectedDuringHold)})` : undefined) },
  { code: 'RUNNER_LOOP_LAG', severity: 'warning', check: (r) => (r.runnerLoopLagP99Ms > LOOP_LAG_WARN_MS ? `a runner worker's event loop lagged (p99 ${r.runnerLoopLagP99Ms} ms): connect times include the runner's delay; use more workers` : undefined) },
  { code: 'TARGET_METRICS_UNAVAILABLE', severity: 'warning', check: (r) => (r.targetSamples === 0 ? "the target's /metrics never answered and it is not a local process: no memory or CPU figures" : undefined) },
  { code: 'TARGET_MEMORY_INCOMPLETE', severity: 'warning', check: (r) => (r.targetSamples !== 0 && r.targetMemoryIncomplete ? `target bytes per connection understated: ${r.targetMemoryIncomplete}` : undefined) },
];

export const checkIdleValidity = (r: IdleValidityInput) => judge(IDLE_RULES, r);
