import type { EncodedLatency, LatencyReport } from '../core/latency.ts';
import type { RunnerHealth } from '../core/runner-health.ts';
import type { Validity } from '../core/validity.ts';
import type { LossSummary } from '../engine/results.ts';
import type { WhispersOptions } from './options.ts';

/** The benchmark's WhispersResult fields plus Rebound's ledger counts, histogram and validity. */
export interface WhispersResult extends LatencyReport, LossSummary {
  test: 'whispers';
  protocol: string;
  target: string;
  runId: string;
  startedAt: string;
  params: Omit<WhispersOptions, 'url'> & { url: undefined };
  n: number;
  clients: number;
  rooms: number;
  initiallyConnected: number;
  connectedClients: number;
  connectFailures: number;
  connectFailureCauses: Record<string, number>;
  whisperIntervalMs: number;
  whispersSent: number;
  /** Unique (receiver, whisper) arrivals. */
  whispersReceived: number;
  /** Σ over whispers of (connected members of the room − 1). */
  expectedReceived: number;
  receivedDeliveries: number;
  expectedDeliveries: number;
  lostDeliveries: number;
  deliveryRatePct: number;
  duplicates: number;
  outOfOrder: number;
  foreignMessages: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  latencyHistogram: EncodedLatency;
  totalElapsedMs: number;
  publishingMs: number;
  aborted: boolean;
  runnerPeakRssMb: number;
  runner: RunnerHealth;
  validity: Validity;
}
