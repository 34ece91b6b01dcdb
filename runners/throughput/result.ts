import type { EncodedLatency, LatencyReport } from '../core/latency.ts';
import type { RunnerHealth } from '../core/runner-health.ts';
import type { Validity } from '../core/validity.ts';
import type { LossSummary } from '../engine/results.ts';

/** The benchmark's ThroughputResult (JitterResult fields + rates) with Rebound's ledger counts and histogram. */
export interface ThroughputResult extends LatencyReport, LossSummary {
  test: 'throughput';
  target: string;
  label: string;
  runId: string;
  stream: string;
  startedAt: string;
  params: Record<string, unknown>;
  clients: number;
  connectedClients: number;
  connectFailures: number;
  connectFailureCauses: Record<string, number>;
  runnerOpenFileLimit: number | null;
  totalMessages: number;
  publishedMessages: number;
  published: number;
  publishFailures: number;
  publishFailureSamples: string[];
  expectedDeliveries: number;
  receivedDeliveries: number;
  lostDeliveries: number;
  deliveryRatePct: number;
  deliveryRateOfConnectedPct: number | null;
  duplicates: number;
  /** The pool publisher does not promise order: reorders it causes show up here. */
  outOfOrder: number;
  foreignMessages: number;
  intervalMs: number;
  targetRateMsgPerSec: number | null;
  publishingMs: number;
  /** expectedDeliveries / publishing seconds (the benchmark's outbound rate). */
  outboundDeliveriesPerSec: number;
  /** receivedDeliveries / publishing seconds. */
  usefulDeliveriesPerSec: number;
  /** receivedDeliveries / (last arrival − first send). */
  deliveriesPerSecEndToEnd: number;
  latencyHistogram: EncodedLatency;
  runnerPeakRssMb: number;
  runner: RunnerHealth;
  elapsedMs: number;
  plannedMs: number;
  aborted: boolean;
  validity: Validity;
}
