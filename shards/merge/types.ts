import type { EncodedLatency, LatencyReport } from '../../engine/measure/latency.ts';
import type { IdleShardFigures } from '../../runners/idle/shard-merge.ts';

/** `num`: a figure of a result; `isObj`: what a shard's result and its blocks must be. */
export { isObj, num } from '../../lib/figures.ts';

/** How one shard's job ended, as the coordinator saw it. */
type ShardStatus = 'done' | 'failed' | 'aborted' | 'timeout' | 'unreachable' | 'rejected' | 'param-mismatch'
  /** Finished, but its result failed the schema (shards/merge/schema.ts): left out of every figure. */
  | 'invalid';

/**
 * A shard's result as the runner service returns it. Only the fields the merge reads with their
 * shape are typed; every other figure (counts, rates, maps) is read through `num` or the schema.
 */
export interface ShardResult {
  latencyHistogram?: EncodedLatency;
  validity?: { valid: boolean; flags: { code: string; severity: 'fatal' | 'warning'; message: string }[] };
  [field: string]: unknown;
}

export interface ShardOutcome {
  /** Short label used in logs and the merged JSON (s1, s2, ... or the host). */
  name: string;
  url: string;
  status: ShardStatus;
  jobId?: string;
  error?: string;
  durationMs: number;
  result?: ShardResult;
  /** Shared-stream mode: this shard's clock minus the coordinator's, with its uncertainty (ms). */
  clock?: ShardClock;
}

export interface ShardClock {
  offsetMs: number;
  /** Half the best round trip, before and after the run combined with the offset's drift. */
  uncertaintyMs: number;
  rttMs: number;
  /** Offsets measured before and after the run (the drift between them is part of the uncertainty). */
  beforeMs: number;
  afterMs: number;
}

type FleetFlagCode =
  | 'UNIFORM_SHARD_CEILING'
  | 'SHARD_FAILED'
  | 'NO_SHARD_SUCCEEDED'
  | 'PARTIAL_PUBLISHER_SILENCE'
  | 'SHARD_LATENCY_OUTLIER'
  | 'CLOCK_UNCERTAINTY_EXCEEDS_LATENCY'
  | 'SHARD_INVALID'
  | 'SHARED_PUBLISHER_FAILED'
  | 'SHARED_SUBSCRIBER_MISMATCH'
  | 'SHARD_RESULT_INVALID'
  | 'FLEET_DELIVERY_OVER_100'
  | 'FLEET_RECEIVED_OVER_EXPECTED'
  | 'FLEET_CONNECTED_OVER_CLIENTS'
  | 'FLEET_TARGET_MEMORY_INCOMPLETE'
  | 'CLOCK_STEPPED';

export interface FleetFlag {
  /** A fleet rule's code, or a shard's own warning code carried over (RUNNER_LOOP_LAG, CONNECT_FAILURES, ...). */
  code: FleetFlagCode | (string & {});
  severity: 'fatal' | 'warning';
  message: string;
  /** The shards the flag is about. */
  shards?: string[];
}

/** What the merged JSON keeps of each shard, so one bad shard stands out next to the union; idle shards add their own figures. */
export interface ShardSummary extends Partial<IdleShardFigures>, Pick<ShardOutcome, 'name' | 'url' | 'status' | 'durationMs'> {
  jobId: string | null;
  error: string | null;
  /** Clients the shard was asked for and how many it connected. */
  clients: number | null;
  connected: number | null;
  receivedDeliveries: number | null;
  lostDeliveries: number | null;
  deliveryRatePct: number | null;
  latency: LatencyReport['latencyRawMs'] | null;
  /**
   * This shard's latency floor minus the fleet's median floor (ms): in own-stream mode a
   * shard whose floor sits far from the others' has a slower path or a skewed clock.
   */
  skewEstimateMs: number | null;
  clock: ShardClock | null;
  valid: boolean | null;
  flags: string[];
}
