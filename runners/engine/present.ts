import type { Emitter } from '../../lib/emitter.ts';
import type { EngineEvents, Progress } from './events.ts';

/** `[label] published 40/60, connected 498/500, delivered 99.87%, drops 120, loop lag p99 3 ms (max 12 ms)`. */
export function progressLine(label: string, p: Progress): string {
  const failed = p.publishFailures ? `, ${p.publishFailures} NOT ACCEPTED` : '';
  const lag = p.loopLagMs ? `, loop lag p99 ${p.loopLagMs.p99} ms (max ${p.loopLagMs.max} ms)` : '';
  return `[${label}] ${p.phase}: published ${p.published}/${p.planned}${failed}, connected ${p.connected}/${p.clients}, received ${p.received}, delivered ${p.deliveredPct}%${p.drops ? `, drops ${p.drops}` : ''}${lag}`;
}

/**
 * The presentation subscriber: every phase, note and (when `progress`) progress event of a run as
 * one line through `write` (stderr at a CLI, the job log on a runner shard). Returns its disposer.
 */
export function logLines(events: Emitter<EngineEvents>, write: ((line: string) => void) | undefined, label: string, o: { progress?: boolean } = {}): () => void {
  if (!write) return () => {};
  const off = [
    events.on('phase', (name, detail) => write(`${label}: ${name}: ${detail}`)),
    events.on('note', (text) => write(`${label}: ${text}`)),
    events.on('settled', (outcome, ms) => write(`${label}: settle ${outcome} after ${ms} ms`)),
    ...(o.progress ? [events.on('progress', (p) => write(progressLine(label, p)))] : []),
  ];
  return () => off.forEach((f) => f());
}
