import type { Emitter } from '../../lib/emitter.ts';
import { ReboundError } from '../../lib/errors.ts';
import type { EngineEvents, Progress } from './events.ts';
import type { Session } from './types.ts';

/**
 * The presentation subscriber: every phase, settle and note event of a run as
 * one line through `write` (stderr at a CLI, the job log on a runner shard), `label: ` first
 * unless the label is empty. Returns its disposer.
 */
export function logLines(events: Emitter<EngineEvents>, write: ((line: string) => void) | undefined, label: string): () => void {
  if (!write) return () => {};
  label = label === '' ? '' : `${label}: `;
  const off = [
    events.on('phase', (name, detail) => write(`${label}${name}: ${detail}`)),
    events.on('note', (text) => write(`${label}${text}`)),
    events.on('settled', (outcome, ms) => write(`${label}settled (${outcome}) after ${ms} ms`)),
  ];
  return () => off.forEach((f) => f());
}

/** What the runners' `hooks.progress` callbacks get: the phase and the running counts. */
export type ProgressSnapshot = Pick<Progress, 'connected' | 'published' | 'received' | 'deliveredPct'> & { phase: string };

/** What a session runner takes from its caller: the abort, progress snapshots (relayProgress), log lines (logLines), its typed events. */
export interface RunHooks {
  signal?: AbortSignal;
  progress?: (p: ProgressSnapshot) => void;
  log?: (line: string) => void;
  /** The run's typed events, for any other subscriber. */
  events?: (e: Emitter<EngineEvents>) => void;
}

/**
 * Relays a run's phase and progress events to a `hooks.progress` callback as one snapshot shape
 * (a phase change repeats the last counts under the new phase). Returns its disposer.
 */
export function relayProgress(events: Emitter<EngineEvents>, fn: ((p: ProgressSnapshot) => void) | undefined, now?: () => Omit<ProgressSnapshot, 'phase'>): () => void {
  if (!fn) return () => {};
  let last: ProgressSnapshot = { phase: 'connect', connected: 0, published: 0, received: 0, deliveredPct: 0 };
  const off = [
    events.on('phase', (name) => fn((last = { ...last, ...now?.(), phase: name }))),
    events.on('progress', (p: Progress) => fn((last = { phase: p.phase, connected: p.connected, published: p.published, received: p.received, deliveredPct: p.deliveredPct }))),
  ];
  return () => off.forEach((f) => f());
}

/** The session's phase events under a runner's own phase names (others, such as each publisher's `publish`, stay in the session). */
export function relayPhases<N extends string>(s: Session, events: Emitter<{ phase: (name: N, detail: string) => void }>, names: ReadonlySet<string>): () => void {
  return s.events.on('phase', (name, detail) => void (names.has(name) && events.emit('phase', name as N, detail)));
}

/**
 * A job service's cancel, for runners whose contract is to reject on it (avalanche,
 * deploy-impact): throws RR_ERR_RUN_FAILED once the session is aborted, so the run's `finally`
 * stops its nodes, clients and publishers at once.
 */
export function cancelled(s: Pick<Session, 'aborted'>): void {
  if (s.aborted) throw new ReboundError('RR_ERR_RUN_FAILED', 'the run was cancelled');
}
