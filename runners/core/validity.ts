import type { RunnerHealth } from './runner-health.ts';

export type ValidityCode =
  | 'DELIVERY_OVER_100'
  | 'RECEIVED_OVER_EXPECTED'
  | 'NOTHING_CONNECTED'
  | 'NOTHING_PUBLISHED'
  | 'PARTIAL_PUBLISH'
  | 'NEGATIVE_SKEW_FLOOR'
  | 'OVERRAN_PLAN'
  | 'CONNECT_FAILURES'
  | 'RUNNER_FD_LIMIT'
  | 'RUNNER_PORT_EXHAUSTION'
  | 'RUNNER_LOOP_LAG'
  | 'FOREIGN_MESSAGES';

export interface ValidityFlag {
  code: ValidityCode;
  severity: 'fatal' | 'warning';
  message: string;
}

export interface Validity {
  /** False when any fatal flag is set: the numbers must not be quoted. */
  valid: boolean;
  flags: ValidityFlag[];
}

/** What validity needs from a delivery result; every runner's result satisfies it. */
export interface ValidityInput {
  clients: number;
  connectedClients: number;
  connectFailures: number;
  connectFailureCauses?: Record<string, number>;
  totalMessages: number;
  published: number;
  expectedDeliveries: number;
  receivedDeliveries: number;
  deliveryRatePct: number;
  skewFloor: number;
  foreignMessages: number;
  elapsedMs: number;
  plannedMs: number;
  runner: RunnerHealth;
}

/** Runner event-loop lag above this (p99, ms) distorts measured latency. */
export const LOOP_LAG_WARN_MS = 50;

/**
 * Validity flags (the benchmark's set, plus the runner's own health). A runner that hit its own
 * limit says so here instead of letting the target take the blame.
 */
export function checkValidity(r: ValidityInput): Validity {
  const flags: ValidityFlag[] = [];
  const fatal = (code: ValidityCode, message: string) => flags.push({ code, severity: 'fatal', message });
  const warn = (code: ValidityCode, message: string) => flags.push({ code, severity: 'warning', message });
  if (r.deliveryRatePct > 100) fatal('DELIVERY_OVER_100', `delivery rate ${r.deliveryRatePct}% exceeds 100%: the ledger or the payloads are wrong`);
  if (r.receivedDeliveries > r.expectedDeliveries) fatal('RECEIVED_OVER_EXPECTED', `received ${r.receivedDeliveries} > expected ${r.expectedDeliveries}`);
  if (r.connectedClients === 0) fatal('NOTHING_CONNECTED', 'no client connected');
  if (r.published === 0) fatal('NOTHING_PUBLISHED', 'the publisher delivered nothing');
  else if (r.published < r.totalMessages) warn('PARTIAL_PUBLISH', `only ${r.published} of ${r.totalMessages} messages were accepted by the target`);
  if (r.skewFloor < 0) fatal('NEGATIVE_SKEW_FLOOR', `minimum latency ${r.skewFloor} ms is negative: runner and publisher clocks disagree`);
  if (r.elapsedMs > 1.5 * r.plannedMs) fatal('OVERRAN_PLAN', `run took ${r.elapsedMs} ms, more than 1.5x the planned ${r.plannedMs} ms`);
  // The runner's own limits first: those failures say nothing about the target.
  const fd = r.connectFailureCauses?.fd_limit ?? 0;
  const ports = r.connectFailureCauses?.port_exhaustion ?? 0;
  if (fd > 0) fatal('RUNNER_FD_LIMIT', `${fd} clients could not connect because the runner ran out of file descriptors (EMFILE/ENFILE): the runner's limit, not the target's; spread clients over more runner processes (shards)`);
  if (ports > 0) fatal('RUNNER_PORT_EXHAUSTION', `${ports} clients could not connect because the runner ran out of local ports or source addresses (EADDRNOTAVAIL/EADDRINUSE): the runner's limit, not the target's`);
  const targetFailures = r.connectFailures - fd - ports;
  if (r.clients > 0 && targetFailures / r.clients >= 0.01) warn('CONNECT_FAILURES', `${targetFailures} of ${r.clients} clients (${((targetFailures / r.clients) * 100).toFixed(1)}%) failed to connect`);
  if (r.runner.runnerLoopLagMs.p99 > LOOP_LAG_WARN_MS || r.runner.runnerStalledWindowsPct > 5) {
    warn('RUNNER_LOOP_LAG', `the runner's own event loop lagged (p99 ${r.runner.runnerLoopLagMs.p99} ms, max ${r.runner.runnerLoopLagMs.max} ms, ${r.runner.runnerStalledWindowsPct}% of windows stalled): latency is inflated by the runner, not the target`);
  }
  if (r.foreignMessages > 0) warn('FOREIGN_MESSAGES', `${r.foreignMessages} arrivals were not this run's payloads`);
  return { valid: !flags.some((f) => f.severity === 'fatal'), flags };
}
