import { runJitter } from '../jitter/run.ts';
import type { JitterResult } from '../jitter/result.ts';
import { toJitterOptions, type LatencyOptions } from './options.ts';

export type LatencyResult = Omit<JitterResult, 'test' | 'chaos' | 'params'> & { test: 'latency'; params: LatencyOptions };

export interface LatencyHooks {
  signal?: AbortSignal;
  progress?: (p: { phase: string; connected: number; published: number; received: number }) => void;
  log?: (line: string) => void;
}

/**
 * No drops, fixed-rate publishing: the latency distribution of a healthy run. Aborting hands
 * back a partial result (the engine has no abort hook: the caller's process ends the clients).
 */
export async function runLatency(o: LatencyOptions, url: string, hooks: LatencyHooks = {}): Promise<LatencyResult | { test: 'latency'; aborted: true; partial: true; progress: unknown }> {
  const run = runJitter(toJitterOptions(o), url);
  let last: { phase: string; connected: number; published: number; received: number } = { phase: 'connect', connected: 0, published: 0, received: 0 };
  run.events.on('phase', (name, detail) => {
    hooks.log?.(`${name}: ${detail}`);
    last = { ...last, phase: name };
    hooks.progress?.(last);
  });
  run.events.on('progress', (p) => hooks.progress?.((last = { phase: p.phase, connected: p.connected, published: p.published, received: p.received })));
  const aborted = new Promise<{ test: 'latency'; aborted: true; partial: true; progress: unknown }>((resolve) =>
    hooks.signal?.addEventListener('abort', () => resolve({ test: 'latency', aborted: true, partial: true, progress: last }), { once: true }),
  );
  const r = await Promise.race([run.result, aborted]);
  if ('aborted' in r) return r;
  const { chaos: _c, params: _p, jitterEvents: _j, jitterSkipped: _s, ...rest } = r;
  return { ...rest, jitterEvents: 0, jitterSkipped: 0, test: 'latency', params: o };
}
