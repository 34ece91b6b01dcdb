import type { EncodedLatency, LatencyReport } from '../core/latency.ts';
import type { RunnerHealth } from '../core/runner-health.ts';
import type { Quantiles } from '../avalanche/herd.ts';
import type { RestartValidity } from '../avalanche/validity.ts';
import type { DeployImpactOptions } from './options.ts';

/** The publisher's restart as it happened (ms since epoch on the runner's clock). */
export interface PublisherRestart {
  signal: 'SIGKILL' | 'SIGTERM';
  ok: boolean;
  error: string | null;
  oldPid: number;
  newPid: number | null;
  killedAt: string;
  killedAtMs: number;
  exitedAtMs: number | null;
  /** New publisher process ready (started and connected to the runner). */
  respawnedAtMs: number | null;
  /** First message the new process got accepted. */
  resumedAtMs: number | null;
  /** Kill to publishing resumed: the time the app could not publish. */
  downtimeMs: number | null;
  /** Respawn to ready: the new process's start-up cost. */
  processStartMs: number | null;
  /** Messages on the schedule that were never accepted between the last accepted before the kill and the first after. */
  gapMessages: number;
  gapSeqs: { from: number; to: number } | null;
  /**
   * Requests the old process had sent or queued (its schedule ran ahead of the target's answers)
   * but never saw answered when it died: part of the gap when the target never got them.
   */
  unacknowledgedAtKill: number;
  /** The new process resumed the schedule at this seq (messages due while it was down are never sent). */
  resumedAtSeq: number | null;
}

/**
 * Deploy-impact result. Expected deliveries count only what the publisher got accepted, so the
 * publisher's gap is booked as `publisher.gapMessages`, not as the server's loss.
 */
export interface DeployImpactResult extends LatencyReport {
  test: 'deploy-impact';
  target: string;
  runId: string;
  seed: number;
  stream: string;
  startedAt: string;
  params: DeployImpactOptions;
  clients: number;
  connectedClients: number;
  connectFailures: number;
  connectFailureCauses: Record<string, number>;
  initiallyConnected: number;
  /** Clients that lost their connection after the publisher was killed (0 expected: the server does not restart). */
  droppedConnections: number;
  reconnected: number;
  neverReconnected: number;
  disconnectReasons: Record<string, number>;
  publisher: PublisherRestart;
  /** Messages on the publisher's schedule. */
  totalMessages: number;
  /** Messages the publisher processes sent or queued (the never-sent part of the gap excluded). */
  sentMessages: number;
  /** Messages the target accepted (201). */
  published: number;
  publishFailures: number;
  /** `publishFailures` by cause (runners/core/publisher.ts `failureCauses`). */
  publishFailureCauses: Record<string, number>;
  publishFailureSamples: string[];
  /** clients × accepted messages. */
  expectedDeliveries: number;
  receivedDeliveries: number;
  /** Accepted messages that did not reach a client: the server's loss. */
  lostDeliveries: number;
  deliveryRatePct: number;
  /** Received over (clients that connected × expected messages), %: above 100 only when a count is wrong (DELIVERY_OVER_100). */
  deliveryRateOfConnectedPct: number;
  /** Arrivals of messages the dead publisher sent but never saw acknowledged. */
  deliveredUnacknowledged: number;
  duplicates: number;
  outOfOrder: number;
  foreignMessages: number;
  /** Per client, the longest time between two consecutive arrivals (the publisher's gap as clients saw it). */
  deliveryGapMs: Quantiles;
  latencyHistogram: EncodedLatency;
  runnerPeakRssMb: number;
  runner: RunnerHealth;
  elapsedMs: number;
  plannedMs: number;
  validity: RestartValidity;
}
