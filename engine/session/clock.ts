import { sleep } from '../../lib/time.ts';
import type { Clock } from './types.ts';

/** The wall clock: what every run uses unless a test injects another. An abort clears the timer, so an aborted run leaves none behind. */
export const realClock: Clock = { now: () => Date.now(), sleep };

/**
 * A clock a test moves: `sleep` resolves on the next macrotask and moves time forward by what it
 * slept, so a phase that would wait minutes runs in milliseconds with its arithmetic intact.
 */
export function steppedClock(start = 1_000_000): Clock & { advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => void (t += ms),
    sleep: (ms) =>
      new Promise<void>((r) =>
        setImmediate(() => {
          t += Math.max(0, ms);
          r();
        }),
      ),
  };
}
