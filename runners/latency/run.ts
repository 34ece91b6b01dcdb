import { runJitter } from '../jitter/run.ts';
import type { JitterResult } from '../jitter/result.ts';
import { logLines, relayProgress, type RunHooks } from '../../engine/session/present.ts';
import { toJitterOptions, type LatencyOptions } from './options.ts';

export type LatencyResult = Omit<JitterResult, 'test' | 'chaos' | 'params'> & { test: 'latency'; params: LatencyOptions };

/**
 * No drops, fixed-rate publishing: the latency distribution of a healthy run, on the jitter
 * runner's phases (it carries the same loss-cause fields). An abort ends it early with `aborted: true`.
 */
export async function runLatency(o: LatencyOptions, url: string, hooks: Omit<RunHooks, 'events'> = {}): Promise<LatencyResult> {
  const run = runJitter(toJitterOptions(o), url, hooks.signal ? { signal: hooks.signal } : undefined);
  logLines(run.engine, hooks.log, '');
  relayProgress(run.engine, hooks.progress);
  const { chaos: _c, params: _p, jitterEvents: _j, jitterSkipped: _s, ...rest } = await run.result;
  return { ...rest, jitterEvents: 0, jitterSkipped: 0, test: 'latency', params: o };
}
