import type { ManagerOptions } from 'socket.io-client';
import { sleep, withTimeout } from '../../lib/time.ts';
import type { Rng } from '../../lib/rng.ts';
import { backo2Duration } from './seeded-jitter.ts';
import type { TargetClient, TargetDefinition } from './types.ts';
import { ReboundError } from '../../lib/errors.ts';

/**
 * Every reconnect policy, defined once. Library-driven clients: named strategies, so that `tuned`
 * means the same client backoff whichever library reconnects (the main job's tuned columns compare
 * servers on equal client backoff); every adapter maps a name through this module. Runner-driven
 * (manual) clients: the policies and the one loop at the end of this file, which every runner that
 * brings a client back itself (jitter, avalanche/deploy-impact, soak) runs.
 */

/** The strategy names `--reconnect-strategy` accepts. */
export const RECONNECT_STRATEGIES = ['default', 'tuned'] as const;
export type ReconnectStrategyName = (typeof RECONNECT_STRATEGIES)[number];

/** Exponential backoff with full jitter: attempt k waits U(0, min(capMs, baseMs × factor^k)). */
export interface BackoffSpec {
  baseMs: number;
  factor: number;
  capMs: number;
}

/** The benchmark's "tuned" strategy: base 500 ms, ×2 per attempt, capped at 5 s, full jitter. */
export const TUNED_BACKOFF: Readonly<BackoffSpec> = Object.freeze({ baseMs: 500, factor: 2, capMs: 5000 });

/**
 * The tuned backoff with another base (the benchmark's `reconnectBaseMs`: its first attempt comes
 * after about `baseMs`); growth and cap stay the tuned strategy's.
 */
export function tunedSpec(baseMs: number = TUNED_BACKOFF.baseMs): Readonly<BackoffSpec> {
  if (!(Number.isFinite(baseMs) && baseMs > 0)) throw new Error(`tuned backoff base must be > 0 ms (got ${baseMs})`);
  return { ...TUNED_BACKOFF, baseMs };
}

/** A reconnect strategy as `@anycable/core` takes it: attempt (0-based) → delay in ms. */
export type ReconnectStrategyFn = (attempt: number) => number;

/** Upper bound of attempt k's delay (the jitter draws uniformly below it). */
export const backoffCeilingMs = (spec: BackoffSpec, attempt: number): number => Math.min(spec.capMs, spec.baseMs * spec.factor ** Math.max(0, attempt));

/** Full-jitter delay function for `spec`; `rng` is injectable for tests. */
export function fullJitter(spec: BackoffSpec = TUNED_BACKOFF, rng: () => number = Math.random): ReconnectStrategyFn {
  return (attempt) => rng() * backoffCeilingMs(spec, attempt);
}

/** Throws on a name outside RECONNECT_STRATEGIES (the option table validates first; this guards direct callers). */
export function checkStrategyName(name: string | undefined): ReconnectStrategyName {
  if (name === undefined || name === 'library') return 'default';
  if ((RECONNECT_STRATEGIES as readonly string[]).includes(name)) return name as ReconnectStrategyName;
  throw new Error(`unknown reconnect strategy "${name}" (${RECONNECT_STRATEGIES.join(' | ')})`);
}

/** socket.io-client Manager options that shape its reconnect backoff. */
export type SocketIoBackoffOptions = Pick<ManagerOptions, 'reconnectionDelay' | 'reconnectionDelayMax' | 'randomizationFactor'>;

/** What Rebound's CSR client used before strategies existed (kept as `default`): 2 s, max 5 s, ±50%. */
export const SOCKETIO_DEFAULT_BACKOFF: Readonly<SocketIoBackoffOptions> = Object.freeze({ reconnectionDelay: 2000, reconnectionDelayMax: 5000, randomizationFactor: 0.5 });

/**
 * socket.io-client's backoff is `min × 2^k`, spread ±`randomizationFactor` around it, capped at
 * the max. With min = base/2 and a factor of 1, attempt k lands in [0, base × 2^k) like full
 * jitter (in alternating 5% stripes rather than smoothly, but with the same bounds and mean),
 * and the cap is the same. Its growth factor is fixed at 2, so only factor-2 specs map exactly:
 * the tuned spec's is (TUNED_BACKOFF, pinned by its test).
 */
export function socketIoBackoff(name: string | undefined, baseMs?: number): SocketIoBackoffOptions {
  if (checkStrategyName(name) === 'default') return { ...SOCKETIO_DEFAULT_BACKOFF };
  const spec = tunedSpec(baseMs);
  return { reconnectionDelay: spec.baseMs / 2, reconnectionDelayMax: spec.capMs, randomizationFactor: 1 };
}

/**
 * socket.io-client's own default backoff (its Manager's defaults: 1 s x2, +-50%, cap 5 s), which the
 * avalanche herd's runner-driven clients copy under `default`: a manual client then comes back the
 * way a library client with default settings would.
 */
export const SOCKETIO_LIBRARY_BACKOFF: Readonly<SocketIoBackoffOptions> = Object.freeze({ reconnectionDelay: 1000, reconnectionDelayMax: 5000, randomizationFactor: 0.5 });

/**
 * A runner-driven delay before attempt `k` (0-based), one draw from `rng`: `default` is
 * socket.io-client's backo2 formula over SOCKETIO_LIBRARY_BACKOFF (seeded-jitter.ts holds the
 * formula), `tuned` the full jitter every library client uses under `tuned`.
 */
export function strategyDelayMs(name: string | undefined, k: number, rng: Rng, baseMs?: number): number {
  if (checkStrategyName(name) === 'tuned') return fullJitter(tunedSpec(baseMs), rng)(k);
  const b = SOCKETIO_LIBRARY_BACKOFF;
  return backo2Duration({ ms: b.reconnectionDelay, max: b.reconnectionDelayMax, factor: 2, jitter: b.randomizationFactor, attempts: k }, rng);
}

/** How the runner brings back a client whose library does not reconnect (capabilities.reconnect 'manual', and every lean client). */
export interface ManualReconnectPolicy {
  /** Wait before attempt k (0-based), ms. */
  delayMs(attempt: number): number;
  /** Attempts per outage: a target that refuses reconnects is a finding, not a reason to spin. */
  maxAttempts: number;
  /** An attempt still pending after this long counts as failed; Infinity waits for the client's own verdict. */
  attemptTimeoutMs: number;
}

/**
 * The offline time of a runner-driven drop: the drop's planned length, and for a manual target
 * never below its floor (the benchmark's MIN_OFFLINE_MS: 2 s for default Socket.IO, 0 for ws).
 * A library target's offline time is its library's business.
 */
export const offlineAfterDropMs = (t: { reconnect: 'manual' | 'library'; offlineFloorMs: number }, dropMs: number): number => (t.reconnect === 'manual' ? Math.max(dropMs, t.offlineFloorMs) : dropMs);

/**
 * How many attempts a manual client makes before the runner gives it up. The benchmark's driver
 * stops at 30 (its drops last 1-2 s); an outage of network weather outlasts that (laptop-sleep's
 * 6 minutes are ~33 attempts of 10 s), and a runner that stopped trying would book its own limit
 * as the target's "not back by the end". The session's end bounds the loop in time; this count
 * only bounds it where time alone would not (at least 1 s apart: hours).
 */
export const MANUAL_RECONNECT_MAX_ATTEMPTS = 10_000;

/**
 * Stay offline `offlineMs`, then retry every `retryMs`: the benchmark's manual reconnect (the
 * jitter runner: its offline time, then 1 s between attempts of 10 s each, until the run ends).
 */
export function afterOffline(offlineMs: number, o: { retryMs?: number; maxAttempts?: number; attemptTimeoutMs?: number } = {}): ManualReconnectPolicy {
  const retryMs = o.retryMs ?? 1000;
  return { delayMs: (k) => (k === 0 ? offlineMs : retryMs), maxAttempts: o.maxAttempts ?? MANUAL_RECONNECT_MAX_ATTEMPTS, attemptTimeoutMs: o.attemptTimeoutMs ?? 10_000 };
}

/**
 * Back off like a library would, seeded: attempt k waits `strategyDelayMs(name, k)` (the avalanche
 * herd: 500 attempts of 10 s at most, bounded in time by the caller's `done`).
 */
export function strategyBackoff(name: string | undefined, rng: Rng, baseMs?: number): ManualReconnectPolicy {
  checkStrategyName(name);
  return { delayMs: (k) => strategyDelayMs(name, k, rng, baseMs), maxAttempts: 500, attemptTimeoutMs: 10_000 };
}

export interface ReconnectLoopHooks {
  /** Checked before each wait and each attempt: true ends the loop (the run is stopping, the client is back, the wait is over). */
  done(): boolean;
  /** The run's sleep, e.g. one an abort cuts short (default: a plain timer). */
  sleep?(ms: number): Promise<void>;
  onAttempt?(attempt: number): void;
  onFailure?(err: unknown, attempt: number): void;
}

/**
 * Bring one client back under `policy`: wait, attempt `reconnect()`, repeat. Resolves true once an
 * attempt subscribed, false when `done()` ended it or the attempts ran out. Never rejects.
 */
export async function reconnectLoop(client: Pick<TargetClient, 'reconnect'>, policy: ManualReconnectPolicy, hooks: ReconnectLoopHooks): Promise<boolean> {
  const wait = hooks.sleep ?? sleep;
  for (let k = 0; k < policy.maxAttempts && !hooks.done(); k++) {
    await wait(policy.delayMs(k));
    if (hooks.done()) return false;
    hooks.onAttempt?.(k);
    try {
      const attempt = client.reconnect();
      await (Number.isFinite(policy.attemptTimeoutMs) ? withTimeout(attempt, policy.attemptTimeoutMs) : attempt);
      return true;
    } catch (err) {
      hooks.onFailure?.(err, k);
    }
  }
  return false;
}

/**
 * One reconnect loop per client at a time: a disconnect noticed while client i is already being
 * brought back (a network loss during our own drop, a second close event) joins nothing and
 * starts nothing.
 */
export class ManualReconnects {
  private readonly busy: Uint8Array;
  constructor(clients: number) {
    this.busy = new Uint8Array(clients);
  }

  active(i: number): boolean {
    return this.busy[i] === 1;
  }

  async run(i: number, client: Pick<TargetClient, 'reconnect'>, policy: ManualReconnectPolicy, hooks: ReconnectLoopHooks): Promise<boolean> {
    if (this.busy[i]) return false;
    this.busy[i] = 1;
    try {
      return await reconnectLoop(client, policy, hooks);
    } finally {
      this.busy[i] = 0;
    }
  }
}

/**
 * The reconnect options against the target, for every runner that takes them (jitter, latency,
 * avalanche, deploy-impact) and again where a session opens its clients: a base the default
 * strategy would never read is refused, not ignored; a target that keeps its own backoff
 * (`ownBackoff`, e.g. pusher-js) takes no tuned one, with the target's own reason.
 */
export function checkReconnectOptions(target: Pick<TargetDefinition, 'name' | 'ownBackoff'>, o: { reconnectStrategy: string; reconnectBaseMs?: number }): void {
  if (o.reconnectBaseMs !== undefined && o.reconnectBaseMs !== 500 && o.reconnectStrategy !== 'tuned') {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `reconnect-base-ms sets the base of the tuned backoff: add --reconnect-strategy tuned (got ${o.reconnectBaseMs} with "${o.reconnectStrategy}")`, { details: { option: 'reconnectBaseMs' } });
  }
  if (o.reconnectStrategy === 'tuned' && target.ownBackoff) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `${target.ownBackoff}: --reconnect-strategy tuned is not supported by target ${target.name}`, { details: { option: 'reconnectStrategy' } });
  }
}
