import { ReboundError } from '../../lib/errors.ts';
import { childRng, type Rng } from '../../lib/rng.ts';

/**
 * The client libraries' reconnect jitter, drawn from the run's seed instead of Math.random.
 *
 * socket.io-client and @anycable/core randomise every reconnect delay with Math.random, so two
 * runs of one seeded plan gave every client a different reconnect schedule: with a dozen clients
 * and a couple of disruptions, recover p50 moved by a third between runs for that reason alone,
 * which hid what the runs were meant to compare (a target, a proxy). Each function below keeps
 * the library's own formula and only swaps the random source, so `default` still means what the
 * library does, now one draw sequence per (seed, client).
 */

/** Keeps a client's reconnect stream apart from its drop-schedule stream (`childRng(seed, i)`). */
const RECONNECT_SALT = 0x2c1b3c6d;

/** Client `index`'s reconnect-jitter stream for `seed`. */
export const reconnectRng = (seed: number, index: number): Rng => childRng(seed ^ RECONNECT_SALT, index);

/** socket.io-client's `contrib/backo2.js` state, as its Manager keeps it (`manager.backoff`). */
interface Backo2 {
  ms: number;
  max: number;
  factor: number;
  jitter: number;
  attempts: number;
  duration(): number;
}

/** backo2's `duration()` with `rng` for Math.random: `ms × factor^attempts`, ± up to `jitter × ms` (sign from the same draw), capped. */
export function backo2Duration(b: Omit<Backo2, 'duration'>, rng: Rng): number {
  let ms = b.ms * Math.pow(b.factor, b.attempts++);
  if (b.jitter) {
    const rand = rng();
    const deviation = Math.floor(rand * b.jitter * ms);
    ms = (Math.floor(rand * 10) & 1) === 0 ? ms - deviation : ms + deviation;
  }
  return Math.min(ms, b.max) | 0;
}

/**
 * Make a socket.io-client Manager draw its reconnect jitter from `rng`. The Manager calls
 * `this.backoff.duration()` for every attempt and has no option for the random source, so the
 * instance's method is replaced; min, max, factor and randomizationFactor stay the Manager's.
 */
export function seedSocketIoBackoff(manager: unknown, rng: Rng): void {
  const b = (manager as { backoff?: Partial<Backo2> } | undefined)?.backoff;
  if (!b || typeof b.duration !== 'function' || typeof b.ms !== 'number' || typeof b.attempts !== 'number') {
    throw new ReboundError('RR_ERR_INTERNAL', 'socket.io-client Manager has no backo2 `backoff`: cannot seed its reconnect jitter (library changed?)');
  }
  const state = b as Backo2;
  state.duration = () => backo2Duration(state, rng);
}

/**
 * @anycable/core's `backoffWithJitter(interval)` (its default reconnect strategy) with `rng` for
 * Math.random: attempt k waits U(interval × rate^k, interval × rate^(k+1)) × (1 ± U·jitterRatio),
 * capped at maxInterval when given.
 */
export function seededBackoffWithJitter(intervalMs: number, rng: Rng, opts: { backoffRate?: number; jitterRatio?: number; maxInterval?: number } = {}): (attempt: number) => number {
  const rate = opts.backoffRate || 2;
  const jitterRatio = opts.jitterRatio ?? 0.5;
  return (attempts) => {
    const left = intervalMs * rate ** attempts;
    const right = left * rate;
    let delay = left + (right - left) * rng();
    const deviation = 2 * (rng() - 0.5) * jitterRatio;
    delay = delay * (1 + deviation);
    if (opts.maxInterval && opts.maxInterval < delay) delay = opts.maxInterval;
    return delay;
  };
}
