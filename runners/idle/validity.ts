import type { ValidityFlag } from '../../engine/measure/validity.ts';
import { LOOP_LAG_WARN_MS } from '../../engine/measure/validity.ts';

export type IdleValidityCode = 'NOTHING_CONNECTED' | 'RUNNER_FD_LIMIT' | 'RUNNER_PORT_EXHAUSTION' | 'CONNECT_FAILURES' | 'RUNNER_LOOP_LAG' | 'HOLD_DISCONNECTS' | 'TARGET_METRICS_UNAVAILABLE' | 'TARGET_MEMORY_INCOMPLETE';
export type IdleValidityFlag = Omit<ValidityFlag, 'code'> & { code: IdleValidityCode };

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
}

/**
 * Idle validity: the runner's own limits are named as such (fatal: the count says nothing about
 * the target), target-side failures and losses are warnings with their share.
 */
export function checkIdleValidity(r: IdleValidityInput): { valid: boolean; flags: IdleValidityFlag[] } {
  const flags: IdleValidityFlag[] = [];
  const fatal = (code: IdleValidityCode, message: string) => flags.push({ code, severity: 'fatal', message });
  const warn = (code: IdleValidityCode, message: string) => flags.push({ code, severity: 'warning', message });
  if (r.subscribed === 0) fatal('NOTHING_CONNECTED', 'no client subscribed');
  const fd = r.failureCauses.fd_limit ?? 0;
  const ports = r.failureCauses.port_exhaustion ?? 0;
  if (fd > 0) fatal('RUNNER_FD_LIMIT', `${fd} connections failed because a runner worker ran out of file descriptors (EMFILE/ENFILE): the runner's limit, not the target's; use more workers (workers=auto) or shards`);
  if (ports > 0) fatal('RUNNER_PORT_EXHAUSTION', `${ports} connections failed because the runner ran out of local ports or source addresses (EADDRNOTAVAIL/EADDRINUSE): the runner's limit, not the target's; raise addresses`);
  const targetFailures = r.failed - fd - ports;
  if (r.clients > 0 && targetFailures / r.clients >= 0.01) warn('CONNECT_FAILURES', `${targetFailures} of ${r.clients} connections (${((targetFailures / r.clients) * 100).toFixed(1)}%) failed at the target or timed out`);
  const lost = Object.values(r.disconnectedDuringHold).reduce((a, b) => a + b, 0);
  if (lost > 0) warn('HOLD_DISCONNECTS', `${lost} subscribed connections were lost during the hold (${JSON.stringify(r.disconnectedDuringHold)})`);
  if (r.runnerLoopLagP99Ms > LOOP_LAG_WARN_MS) warn('RUNNER_LOOP_LAG', `a runner worker's event loop lagged (p99 ${r.runnerLoopLagP99Ms} ms): connect times include the runner's delay; use more workers`);
  if (r.targetSamples === 0) warn('TARGET_METRICS_UNAVAILABLE', "the target's /metrics never answered and it is not a local process: no memory or CPU figures");
  else if (r.targetMemoryIncomplete) warn('TARGET_MEMORY_INCOMPLETE', `target bytes per connection understated: ${r.targetMemoryIncomplete}`);
  return { valid: !flags.some((f) => f.severity === 'fatal'), flags };
}
