import type { Validity } from '../core/validity.ts';
import type { LossSummary, RunFields } from '../engine/results.ts';
import type { WhispersOptions } from './options.ts';

/** The fields it shares with the publish-and-listen results, in their names (a whisper is a delivery). */
type SharedFields = 'target' | 'runId' | 'startedAt' | 'clients' | 'connectedClients' | 'connectFailures' | 'connectFailureCauses' | 'receivedDeliveries' | 'expectedDeliveries' | 'lostDeliveries' | 'deliveryRatePct' | 'duplicates' | 'outOfOrder' | 'foreignMessages' | 'latencyHistogram' | 'latencyRawMs' | 'latencyOverMinMs' | 'skewFloor' | 'runnerPeakRssMb' | 'runner';

/** The benchmark's WhispersResult fields plus Rebound's ledger counts, histogram and validity. */
export interface WhispersResult extends Pick<RunFields, SharedFields>, LossSummary {
  test: 'whispers';
  protocol: string;
  params: Omit<WhispersOptions, 'url'> & { url: undefined };
  n: number;
  rooms: number;
  initiallyConnected: number;
  whisperIntervalMs: number;
  whispersSent: number;
  /** Unique (receiver, whisper) arrivals. */
  whispersReceived: number;
  /** Σ over whispers of (connected members of the room − 1). */
  expectedReceived: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  totalElapsedMs: number;
  publishingMs: number;
  aborted: boolean;
  validity: Validity;
}
