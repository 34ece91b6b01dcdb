import { runJitter } from '../jitter/run.ts';
import type { JitterResult } from '../jitter/result.ts';
import { toJitterOptions, type LatencyOptions } from './options.ts';

export type LatencyResult = Omit<JitterResult, 'test' | 'chaos' | 'params'> & { test: 'latency'; params: LatencyOptions };

export interface LatencyHooks {
  signal?: AbortSignal;
  /** `deliveredPct` as in runners/jitter/progress.ts (distinct deliveries over expected so far). */
  progress?: (p: { phase: string; connected: number; published: number; deliveredPct: number }) => void;
  log?: (line: string) => void;
}

/** No drops, fixed-rate publishing: the latency distribution of a healthy run. An abort ends it early with `aborted: true`. */
export async function runLatency(o: LatencyOptions, url: string, hooks: LatencyHooks = {}): Promise<LatencyResult> {
  const run = runJitter(toJitterOptions(o), url, hooks.signal ? { signal: hooks.signal } : undefined);
  let last: { phase: string; connected: number; published: number; deliveredPct: number } = { phase: 'connect', connected: 0, published: 0, deliveredPct: 0 };
  run.events.on('phase', (name, detail) => {
    hooks.log?.(`${name}: ${detail}`);
    last = { ...last, phase: name };
    hooks.progress?.(last);
  });
  run.events.on('progress', (p) => hooks.progress?.((last = { phase: p.phase, connected: p.connected, published: p.published, deliveredPct: p.deliveredPct })));
  const { chaos: _c, params: _p, jitterEvents: _j, jitterSkipped: _s, ...rest } = await run.result;
  return { ...rest, jitterEvents: 0, jitterSkipped: 0, test: 'latency', params: o };
}
