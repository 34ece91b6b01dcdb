import type { ReconnectPolicy } from '../../runners/engine/types.ts';

/**
 * How a chaos run brings a manual-reconnect client (ws, default Socket.IO: the runner reconnects
 * them, not their library) back: after its offline time, then once a second, bounded, so a target
 * that refuses reconnects is a finding, not a reason to spin.
 */
export const chaosReconnect = (offlineMs: number): ReconnectPolicy => ({ delayMs: (k) => (k === 0 ? offlineMs : 1000), maxAttempts: 30, attemptTimeoutMs: 10_000 });
