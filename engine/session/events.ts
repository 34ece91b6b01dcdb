/**
 * What a run tells its audience while it goes. The engine and its phases emit these; a CLI's
 * stderr lines, a runner shard's job log and a worker's IPC channel are subscribers
 * (present.ts), so no runner writes prose itself.
 */

export type PhaseName =
  | 'start'
  | 'connect'
  | 'warmup'
  | 'publish'
  | 'listen'
  | 'chaos'
  | 'restart'
  | 'herd'
  | 'deploy'
  | 'whisper'
  | 'soak'
  | 'ramp'
  | 'hold'
  | 'close'
  | 'drain'
  | 'settle'
  | 'report';

/** A snapshot while messages flow (every phase that publishes or listens emits one every few seconds). */
export interface Progress {
  phase: PhaseName;
  /** Messages sent so far, of `planned`. */
  sent: number;
  planned: number;
  /** Of those, accepted by the target / not accepted. */
  published: number;
  publishFailures: number;
  /** Clients connected right now, of `clients`. */
  connected: number;
  clients: number;
  /** Distinct deliveries so far. */
  received: number;
  /** `received` over (clients seen connected x messages sent and not failed), %. */
  deliveredPct: number;
  /** Disruptions applied or attempted so far. */
  drops: number;
  /** The runner's own event-loop lag since the previous snapshot, ms (absent when not watched). */
  loopLagMs?: { p99: number; max: number };
}

/** How a settle ended: its predicate held, its time ran out, or the run was aborted. */
export type SettleOutcome = 'done' | 'timeout' | 'aborted';

export interface EngineEvents {
  /** A phase begins; `detail` is one human line about what it will do. */
  phase: (name: PhaseName, detail: string) => void;
  progress: (p: Progress) => void;
  /** A settle ended. */
  settled: (outcome: SettleOutcome, waitedMs: number) => void;
  /** A chaos step was applied or skipped (chaos/execute). */
  disruption: (e: { kind: string; scope: 'client' | 'group'; target: number; applied: boolean; atMs: number }) => void;
  /** A finding worth a line that is neither a phase nor progress (a worker's ramp tally, a restart failure). */
  note: (text: string) => void;
}
