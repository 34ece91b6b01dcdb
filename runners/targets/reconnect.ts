/**
 * Named reconnect strategies for library-driven targets, defined once so that `tuned` means the
 * same client backoff whichever library reconnects (the main job's tuned columns compare servers
 * on equal client backoff). Every adapter maps a name through this module.
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
export interface SocketIoBackoffOptions {
  reconnectionDelay: number;
  reconnectionDelayMax: number;
  randomizationFactor: number;
}

/** What Rebound's CSR client used before strategies existed (kept as `default`): 2 s, max 5 s, ±50%. */
export const SOCKETIO_DEFAULT_BACKOFF: Readonly<SocketIoBackoffOptions> = Object.freeze({ reconnectionDelay: 2000, reconnectionDelayMax: 5000, randomizationFactor: 0.5 });

/**
 * socket.io-client's backoff is `min × 2^k`, spread ±`randomizationFactor` around it, capped at
 * the max. With min = base/2 and a factor of 1, attempt k lands in [0, base × 2^k) like full
 * jitter (in alternating 5% stripes rather than smoothly, but with the same bounds and mean),
 * and the cap is the same. Its growth factor is fixed at 2, so only factor-2 specs map exactly.
 */
export function socketIoBackoff(name: string | undefined, baseMs?: number): SocketIoBackoffOptions {
  if (checkStrategyName(name) === 'default') return { ...SOCKETIO_DEFAULT_BACKOFF };
  const spec = tunedSpec(baseMs);
  if (spec.factor !== 2) throw new Error('socket.io-client backs off by x2 only');
  return { reconnectionDelay: spec.baseMs / 2, reconnectionDelayMax: spec.capMs, randomizationFactor: 1 };
}
