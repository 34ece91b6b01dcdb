import type { ClientTally } from '../../engine/measure/ledger.ts';
import type { EpochReport } from '../../engine/measure/epoch-book.ts';
import type { LossSummary, RunFields } from '../../engine/session/results.ts';
import type { Validity } from '../../engine/measure/validity.ts';
import type { JitterOptions } from './options.ts';
import type { ChaosEvent } from '../../chaos/plans/schedule.ts';
import type { DisruptionReport } from '../../engine/measure/disruptions.ts';
import type { RunSeries } from '../../engine/measure/timeseries.ts';
import type { TargetUsage } from '../../engine/measure/target-usage.ts';
import type { WeatherResult } from './weather.ts';

/**
 * The jitter result. Field names follow the benchmark's JSON where it has them
 * (deliveryRatePct, lostDeliveries, ..., runnerPeakRssMb); the rest is Rebound's addition.
 * `latencyHistogram` is the exact, mergeable latency record; percentiles are derived from it.
 */
export interface JitterResult extends RunFields, LossSummary {
  test: 'jitter';
  seed: number;
  params: JitterOptions;
  /** The runner process's open-file limit (one socket per client, plus the proxy's when embedded). */
  runnerOpenFileLimit: number | null;
  /** The run's restarts of its target (weather deploy) that failed, each its reason: RESTART_FAILED. */
  restartFailures?: string[];
  /** With a deploy: publish failures answered while the run had its target down (PARTIAL_PUBLISH is then a warning when they are all of them). */
  publishFailuresDuringRestarts?: number;
  /** Clients whose first connect failed or timed out and that connected later; counted in connectedClients. */
  lateConnects: number;
  /** publishFailures by cause: `HTTP <status>` for a refusal, an error code (ECONNREFUSED, ECONNRESET, TIMEOUT...) otherwise. */
  publishFailureCauses: Record<string, number>;
  /** The run was declared to be about publisher faults (`--allow-publish-failures`): PARTIAL_PUBLISH is a warning, not fatal. */
  allowPublishFailures: boolean;
  /** Deliveries of messages the publisher counted as failed (the target broadcast them anyway); above 0 they can push received over expected (RECEIVED_OVER_EXPECTED). */
  unacceptedDeliveries: number;
  /** The part of unacceptedDeliveries whose publish outcome was unknown (UNCONFIRMED_DELIVERED): stored by the target, outside expected and the rates. */
  unconfirmedDeliveries?: number;
  /** receivedDeliveries / (connectedClients × published), %: above 100 means the connected count is wrong (DELIVERY_OVER_100). */
  deliveryRateOfConnectedPct: number;
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
  /**
   * Replay targets: epochs the clients saw and the lost deliveries booked to a broker that came
   * back empty (BROKER_EPOCH_CHANGED, engine/measure/epoch-book.ts); part of lostDeliveries, which
   * stays the ledger's total. null for targets without epochs; absent in older results.
   */
  brokerEpoch?: EpochReport | null;
  disconnectReasons: Record<string, number>;
  /** Time from a drop to the client being connected and subscribed again, ms. */
  recoveryMs: { count: number; p50: number; p95: number; max: number };
  worstClient: ClientTally | null;
  /**
   * The chaos plan as executed: per disruption kind, time to detect, time to recover and a
   * recovery curve; plus every step of the seeded timeline.
   */
  chaos: { plan: string; groups: number; proxyApi: string | null; offlineMs: number; disruptions: DisruptionReport[]; timeline: ChaosEvent[] };
  /** Per-second connected/arrivals/published/delivered series and recovery quantiles, for the visual report (absent in older results). */
  series?: RunSeries;
  /** Memory and CPU of a target this runner started itself (absent for --url targets). */
  targetResources?: TargetUsage;
  /** `subscriber`: a subscribe-only shard of a shared stream (published nothing; judged at the merge). Absent in worker-merged results. */
  role?: 'publisher' | 'subscriber';
  /** Seqs the target accepted (publisher) or that reached any client (subscriber), as ranges "1-57,59-120". */
  acceptedSeqs?: string;
  /** Subscriber: distinct clients that got each seq (index 0 = seq 1), for an exact re-judgement against the publisher's accepted set. */
  arrivalsBySeq?: number[];
  /** The run was stopped early (the runner shard shut down, SIGTERM/SIGINT at the CLI): figures cover what was measured until then; validity says ABORTED. */
  aborted?: boolean;
  /**
   * Disruptions inside the publishing window: planned by the seeded schedule, and applied. Present
   * when the options asked for disruptions; none applied is NO_DISRUPTIONS (absent in older results).
   */
  disruptionWindow?: { planned: number; applied: number; windowMs: number };
  /**
   * Clients once connected that were still offline when the settle ended (a disruption or the
   * server took them down), and the accepted messages they missed: booked as "not back by the end"
   * (CLIENTS_OFFLINE_AT_END), part of lostDeliveries but not loss while connected (absent in older
   * results).
   */
  offlineAtEnd?: { clients: number; lostDeliveries: number };
  /** Network weather (`--weather`): each condition's delivery, loss by cause, resume outcomes, latency and recovery over its own clients (absent without weather). */
  weather?: WeatherResult;
  validity: Validity;
}
