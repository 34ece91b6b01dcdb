/**
 * Why a connection step stopped short, named the way the method names it (seeds/000): a crash,
 * memory, the target's fd limit, connect-rate bound, or the rig (the runner's own fd, port or
 * worker limits, which say nothing about the target). First match wins, in that order: a crash
 * explains every failure after it, a rig limit makes the target's figures meaningless.
 */
export type FailureMode = 'crash' | 'memory' | 'the rig' | 'fd limit' | 'connect-rate bound' | 'target refused' | 'none';

export interface StepObservation {
  requested: number;
  subscribed: number;
  /** The idle runner's failure causes: fd_limit / port_exhaustion (runner), timeout, target. */
  failureCauses: Record<string, number>;
  /** The target process ended during the step (local), or stopped answering /health (external). */
  exited: { code: number | null; signal: string | null } | null;
  lowMemory: boolean;
  minAvailMb: number | null;
  /** Peak open files of the local target and its limit. */
  targetFdPeak: number | null;
  targetFdLimit: number | null;
  /** Processes of the target (a cluster's primary and workers); null when not sampled. */
  targetProcesses?: number | null;
  targetPeakCpuPct: number | null;
  /** The runner failed on its own (a worker died, its loop lagged): fatal idle validity or a thrown worker error. */
  rigError?: string;
}

/** Within this many descriptors of its limit the target counts as having hit it (it also holds listeners, pipes, files). */
const FD_MARGIN = 64;

export function classifyStep(o: StepObservation, minSubscribedPct: number): { mode: FailureMode; why: string } {
  const pct = o.requested > 0 ? (o.subscribed / o.requested) * 100 : 0;
  const short = `${o.subscribed.toLocaleString('en-US')} of ${o.requested.toLocaleString('en-US')} subscribed (${pct.toFixed(1)}%)`;
  if (o.exited) return { mode: 'crash', why: `the target exited during the step (${o.exited.signal ? `signal ${o.exited.signal}` : `code ${o.exited.code}`}); ${short}` };
  if (o.lowMemory) return { mode: 'memory', why: `available memory fell to ${o.minAvailMb ?? '?'} MB, under the floor; the step was aborted at ${short}` };
  const runnerFd = o.failureCauses.fd_limit ?? 0;
  const ports = o.failureCauses.port_exhaustion ?? 0;
  if (o.rigError || runnerFd > 0 || ports > 0) {
    const parts = [o.rigError, runnerFd ? `${runnerFd} connects failed on the runner's own fd limit (EMFILE)` : '', ports ? `${ports} on the runner's local ports (EADDRNOTAVAIL)` : ''].filter(Boolean);
    return { mode: 'the rig', why: `${parts.join('; ')}: the runner's limit, not the target's; ${short}` };
  }
  if (pct >= minSubscribedPct) return { mode: 'none', why: short };
  if (o.targetFdPeak !== null && o.targetFdLimit !== null && o.targetFdPeak >= o.targetFdLimit - FD_MARGIN) {
    return { mode: 'fd limit', why: `the target held ${o.targetFdPeak} open files against its limit of ${o.targetFdLimit} ${(o.targetProcesses ?? 1) > 1 ? ` (its busiest of ${o.targetProcesses} processes: more connections need more workers)` : ' (one process: more connections need more processes)'}; ${short}` };
  }
  const timeouts = o.failureCauses.timeout ?? 0;
  const failed = Object.values(o.failureCauses).reduce((a, b) => a + b, 0);
  if (timeouts > 0 && timeouts >= failed / 2) {
    return { mode: 'connect-rate bound', why: `${timeouts} of ${failed} failed connects timed out waiting for the target (peak target CPU ${o.targetPeakCpuPct ?? '?'}%): it accepts slower than the ramp; ${short}` };
  }
  return { mode: 'target refused', why: `${failed} connects were refused or reset by the target (${JSON.stringify(o.failureCauses)}); ${short}` };
}
