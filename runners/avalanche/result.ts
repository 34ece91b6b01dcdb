import type { LossSummary, RunFields } from '../../engine/session/results.ts';
import type { RestartValidity } from './validity.ts';

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
  /** `publishFailures` by cause (engine/measure/publisher.ts `failureCauses`). */
  publishFailureCauses: Record<string, number>;
  /** Received over (clients that connected × expected messages), %: above 100 only when a count is wrong (DELIVERY_OVER_100). */
  deliveryRateOfConnectedPct: number;
  validity: RestartValidity;
}

export type { AvalancheResult } from './run.ts';
