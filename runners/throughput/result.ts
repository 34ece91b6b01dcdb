import type { Validity } from '../core/validity.ts';
import type { LossSummary, RunFields } from '../engine/results.ts';

/** The benchmark's ThroughputResult (JitterResult fields + rates) with Rebound's ledger counts and histogram. */
export interface ThroughputResult extends RunFields, LossSummary {
  test: 'throughput';
  label: string;
  params: Record<string, unknown>;
  runnerOpenFileLimit: number | null;
  publishedMessages: number;
  deliveryRateOfConnectedPct: number | null;
  /** The pool publisher does not promise order: reorders it causes show up here. */
  outOfOrder: number;
  intervalMs: number;
  targetRateMsgPerSec: number | null;
  publishingMs: number;
  /** expectedDeliveries / publishing seconds (the benchmark's outbound rate). */
  outboundDeliveriesPerSec: number;
  /** receivedDeliveries / publishing seconds. */
  usefulDeliveriesPerSec: number;
  /** receivedDeliveries / (last arrival − first send). */
  deliveriesPerSecEndToEnd: number;
  aborted: boolean;
  validity: Validity;
}
