import type { EncodedLatency, LatencyReport } from '../core/latency.ts';
import type { ClientTally } from '../core/ledger.ts';
import type { RunnerHealth } from '../core/runner-health.ts';
import type { Validity } from '../core/validity.ts';
import type { JitterOptions } from './options.ts';
import type { ChaosEvent } from '../../chaos/plans/schedule.ts';
import type { DisruptionReport } from '../core/disruptions.ts';
import type { RunSeries } from '../core/timeseries.ts';
import type { TargetUsage } from '../core/target-usage.ts';

/**
 * The jitter result. Field names follow the benchmark's JSON where it has them
 * (deliveryRatePct, lostDeliveries, ..., runnerPeakRssMb); the rest is Rebound's addition.
 * `latencyHistogram` is the exact, mergeable latency record; percentiles are derived from it.
 */
export interface JitterResult extends LatencyReport {
  test: 'jitter';
  target: string;
  runId: string;
  seed: number;
  stream: string;
  startedAt: string;
  params: JitterOptions;
  clients: number;
  connectedClients: number;
  connectFailures: number;
  /** connectFailures by cause: 'fd_limit' and 'port_exhaustion' are the runner's own limits, 'target' everything else. */
  connectFailureCauses: Record<string, number>;
  /** The runner process's open-file limit (one socket per client, plus the proxy's when embedded). */
  runnerOpenFileLimit: number | null;
  totalMessages: number;
  published: number;
  publishFailures: number;
  publishFailureSamples: string[];
  expectedDeliveries: number;
  receivedDeliveries: number;
  lostDeliveries: number;
  deliveryRatePct: number;
  deliveryRateOfConnectedPct: number;
  duplicates: number;
  outOfOrder: number;
  /** Arrivals that were not this run's payloads (another run on the stream, corrupt data). */
  foreignMessages: number;
  perfectClients: number;
  /** Client disruptions applied: each drop, plus each connected client hit by a network disruption. */
  jitterEvents: number;
  /** Planned disruptions that could not be applied (drop: no live socket, client still reconnecting). */
  jitterSkipped: number;
  reconnects: number;
  reconnectFailures: number;
  /** Reconnects where the server restored the session (CSR recovered / AnyCable restored); null for non-replay targets. csrResumeRatePct is also null when nothing reconnected. */
  csrResumes: number | null;
  csrResumeRatePct: number | null;
  historyRejected: number;
  disconnectReasons: Record<string, number>;
  /** Time from a drop to the client being connected and subscribed again, ms. */
  recoveryMs: { count: number; p50: number; p95: number; max: number };
  latencyHistogram: EncodedLatency;
  worstClient: ClientTally | null;
  runnerPeakRssMb: number;
  runner: RunnerHealth;
  elapsedMs: number;
  plannedMs: number;
  /**
   * The chaos plan as executed: per disruption kind, time to detect, time to recover and a
   * recovery curve; plus every step of the seeded timeline.
   */
  chaos: { plan: string; groups: number; proxyApi: string | null; offlineMs: number; disruptions: DisruptionReport[]; timeline: ChaosEvent[] };
  /** Per-second connected/arrivals/published/delivered series and recovery quantiles, for the visual report (absent in older results). */
  series?: RunSeries;
  /** Memory and CPU of a target this runner started itself (absent for --url targets). */
  targetResources?: TargetUsage;
  validity: Validity;
}
