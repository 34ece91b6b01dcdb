import type { Quantiles } from '../engine/fleet.ts';
import type { RestartRunResult } from '../avalanche/result.ts';
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
export interface DeployImpactResult extends RestartRunResult {
  test: 'deploy-impact';
  params: DeployImpactOptions;
  /** Clients that lost their connection after the publisher was killed (0 expected: the server does not restart). */
  droppedConnections: number;
  publisher: PublisherRestart;
  /** Messages the publisher processes sent or queued (the never-sent part of the gap excluded). */
  sentMessages: number;
  /** clients × accepted messages. */
  expectedDeliveries: number;
  /** Accepted messages that did not reach a client: the server's loss. */
  lostDeliveries: number;
  /** Arrivals of messages the dead publisher sent but never saw acknowledged. */
  deliveredUnacknowledged: number;
  /** Per client, the longest time between two consecutive arrivals (the publisher's gap as clients saw it). */
  deliveryGapMs: Quantiles;
}
