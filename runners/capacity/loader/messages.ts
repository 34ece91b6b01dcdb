import type { TargetModuleReport } from '../../../engine/targets/user-module.ts';
import type { EncodedLatency } from '../../../engine/measure/latency.ts';
import type { LedgerTotals } from '../../../engine/measure/ledger.ts';
import type { RunnerHealth } from '../../../engine/measure/runner-health.ts';

/**
 * Parent <-> loader process messages (a discriminated union, switched exhaustively on both
 * sides). A loader holds connections [first, first + count) of the run's global numbering.
 */
export interface LoaderAssignment {
  loader: number;
  target: string;
  /** One URL per target node; connection i goes to node `nodeOf(i)` (plan.ts). */
  urls: string[];
  /** Every stream of the run; connection i subscribes to `streams[i % streams.length]`. */
  streams: string[];
  first: number;
  count: number;
  /** Connections in flight at once while opening. */
  concurrency: number;
  connectTimeoutMs: number;
}

/** One sequence space: a (stream, publisher) pair the parent's publisher numbers 1..messages. */
export interface StepKey {
  key: string;
  stream: number;
}

/** Accepted seqs per key as inclusive ranges (the publisher's failures are rare: a few ranges per key). */
export type AcceptedRanges = Record<string, [number, number][]>;

export type ToLoader =
  | { type: 'open'; assignment: LoaderAssignment }
  | { type: 'start'; keys: StepKey[]; messagesPerKey: number; pollMs: number }
  | { type: 'settle'; accepted: AcceptedRanges }
  | { type: 'close' };

export interface LoaderReady {
  type: 'ready';
  loader: number;
  requested: number;
  subscribed: number;
  failed: number;
  /** Connect failures by cause; `fd_limit` / `port_exhaustion` are the runner's own limits. */
  failureCauses: Record<string, number>;
  rigLimitFailures: number;
  ms: number;
}

/** One loader's share of a step: ledger totals and the encoded histogram merge exactly in the parent. */
export interface LoaderStep {
  type: 'step';
  loader: number;
  totals: LedgerTotals;
  latency: EncodedLatency;
  health: RunnerHealth;
  /** CPU time of this loader over the step, % of one core. */
  cpuPct: number;
  /** Connections still open at the end of the step. */
  open: number;
  disconnects: Record<string, number>;
  /** A user's target file: its clients' hook faults so far, failed connects included. */
  targetModule?: TargetModuleReport;
}

export type FromLoader = LoaderReady | { type: 'started'; loader: number } | LoaderStep | { type: 'closed'; loader: number } | { type: 'error'; loader: number; message: string };
