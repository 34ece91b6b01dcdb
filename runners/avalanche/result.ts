import type { LossSummary, RunFields } from '../engine/results.ts';
import type { FrontReport } from './front.ts';
import type { HerdReport } from './herd.ts';
import type { Quantiles } from '../engine/fleet.ts';
import type { AvalancheOptions } from './options.ts';
import type { RestartRecord } from './restart.ts';
import type { RestartValidity } from './validity.ts';
import type { BenchmarkAvalancheFields } from './benchmark-fields.ts';

/**
 * What every restart-style run reports alike (avalanche restarts the target, deploy-impact the
 * publisher): who connected, who dropped and came back, what was published and delivered, and
 * the runner's own health. Each result adds its own restart record and measures.
 */
export interface RestartRunResult extends RunFields, LossSummary {
  seed: number;
  /** Clients connected when the restart began. */
  initiallyConnected: number;
  /** Of those, the clients that lost their connection. */
  droppedConnections: number;
  reconnected: number;
  neverReconnected: number;
  disconnectReasons: Record<string, number>;
  /** `publishFailures` by cause (runners/core/publisher.ts `failureCauses`). */
  publishFailureCauses: Record<string, number>;
  /** Received over (clients that connected × expected messages), %: above 100 only when a count is wrong (DELIVERY_OVER_100). */
  deliveryRateOfConnectedPct: number;
  validity: RestartValidity;
}

/**
 * The avalanche result. The names first (droppedConnections, recoveryMs, neverReconnected,
 * downtimeMs, lostDeliveries, duplicates, deliveryRatePct, herd, restart); the benchmark's
 * avalanche names where they mean the same (clients, initiallyConnected, reconnected,
 * neverReconnectedPct, disconnectSpreadMs, reconnectRatePct).
 */
export interface AvalancheResult extends RestartRunResult, BenchmarkAvalancheFields {
  test: 'avalanche';
  params: AvalancheOptions;
  /** Base URL of each node the clients used. */
  nodeUrls: string[];
  /** The TCP front before the nodes (--front): how it spread the clients; null without one. */
  front: FrontReport | null;
  restart: RestartRecord;
  reconnectRatePct: number;
  neverReconnectedPct: number;
  /** Up to 10 clients that never came back: what the runner saw of them (ms relative to the restart). */
  neverReconnectedSample: { client: number; node: number; drops: number; attempts: number; droppedAtMs: number; attemptPending: boolean }[];
  /** Restart (of the client's node) to the client connected and resubscribed, ms. */
  recoveryMs: Quantiles;
  /** The same, timed from the client's node listening again (null when the runner did not see it): reconnect cost without the server's boot. */
  recoveryFromListeningMs: Quantiles | null;
  /** First drop to last reconnect, ms; to the end of the wait when `downtimeOpenEnded`. */
  downtimeMs: number;
  downtimeOpenEnded: boolean;
  /** First to last disconnect, ms. */
  disconnectSpreadMs: number;
  /** Reconnects on which the server restored the session (CSR recovered, AnyCable restored). */
  resumedReconnects: number;
  /** Replay protocols: resubscribes whose history the server could not serve (a memory broker restarted); null for others. */
  historyNotFound: number | null;
  /** Disconnects before the restart (the target or network was unstable during warm-up). */
  dropsBeforeRestart: number;
  /** The client library's own words per disconnect, e.g. socket.io's 'io server disconnect' (it then does not reconnect by itself). */
  disconnectDetails: Record<string, number>;
  herd: HerdReport;
  recoveryTimedOut: boolean;
  /** Messages accepted by the target (one publisher per node without a shared broker: a message counts once when every node took it). */
  published: number;
  publishFailuresDuringRestart: number;
  publishFailuresOutsideRestart: number;
  /** clients × messages: what a target that never went down would have delivered. */
  expectedDeliveries: number;
  /** Deliveries of messages the client's node accepted: what the server itself promised. */
  acceptedDeliveries: number;
  /** Of those, not delivered: the server's own loss (history gone with the process, at-most-once). */
  lostAcceptedDeliveries: number;
  deliveryRateOfAcceptedPct: number;
  /**
   * Deliveries of messages the publisher saw refused (while the node was down): expected − accepted.
   * Not all are lost: `unacceptedDeliveries` of them arrived anyway, so lostDeliveries =
   * lostAcceptedDeliveries + lostUnpublishedDeliveries − unacceptedDeliveries.
   */
  lostUnpublishedDeliveries: number;
  /** Deliveries of messages the publisher saw refused (an error or timeout after the broadcast went out) that arrived anyway. */
  unacceptedDeliveries: number;
  perfectClients: number;
  runnerOpenFileLimit: number | null;
  /** The benchmark's names: the connect phase, and the whole run (= elapsedMs). */
  rampElapsedMs: number;
  totalElapsedMs: number;
}
