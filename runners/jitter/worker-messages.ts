import type { JitterOptions } from './options.ts';
import type { JitterResult } from './result.ts';
import type { JitterEvents } from './run.ts';

/** Parent ↔ jitter worker messages (a discriminated union, switched exhaustively on both sides). */
export type ToJitterWorker = { type: 'run'; opts: JitterOptions; url: string; targetPid?: number } | { type: 'stop' };
export type FromJitterWorker =
  | { type: 'phase'; name: Parameters<JitterEvents['phase']>[0]; detail: string }
  | { type: 'progress'; progress: Parameters<JitterEvents['progress']>[0] }
  | { type: 'result'; result: JitterResult }
  | { type: 'error'; message: string };
