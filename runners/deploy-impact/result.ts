/** The publisher's restart as it happened (ms since epoch on the runner's clock). */
export interface PublisherRestart {
  signal: 'SIGKILL' | 'SIGTERM';
  ok: boolean;
  error: string | null;
  oldPid: number;
  newPid: number | null;
  killedAt: string;
  killedAtMs: number;
  exitedAtMs: number | null;
  /** New publisher process ready (started and connected to the runner). */
  respawnedAtMs: number | null;
  /** First message the new process got accepted. */
  resumedAtMs: number | null;
  /** Kill to publishing resumed: the time the app could not publish. */
  downtimeMs: number | null;
  /** Respawn to ready: the new process's start-up cost. */
  processStartMs: number | null;
  /** Messages on the schedule that were never accepted between the last accepted before the kill and the first after. */
  gapMessages: number;
  gapSeqs: { from: number; to: number } | null;
  /**
   * Requests the old process had sent or queued (its schedule ran ahead of the target's answers)
   * but never saw answered when it died: part of the gap when the target never got them.
   */
  unacknowledgedAtKill: number;
  /** The new process resumed the schedule at this seq (messages due while it was down are never sent). */
  resumedAtSeq: number | null;
}

export type { DeployImpactResult } from './run.ts';
