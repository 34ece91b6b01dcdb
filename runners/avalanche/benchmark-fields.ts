import { quantiles, type ClientTrack } from '../../engine/session/client-pool.ts';

/**
 * The benchmark's avalanche measures (anycable/nodejs-websocket-bench lib/avalanche-runner.ts),
 * from the same per-client tracks as Rebound's own: `disconnected` (clients the restart dropped),
 * `reconnectMs` (each one's disconnect to back), `recoveryTimeMs` (first disconnect until 95% of
 * them are back, or the recovery deadline when fewer come back) and `totalDowntimeMs`. With no
 * disconnect at all every value is 0, as there.
 */
export function benchmarkAvalancheFields(dropped: readonly Pick<ClientTrack, 'connected' | 'firstDropAt' | 'backAt'>[], o: { recoveryTimeoutMs: number; downtimeMs: number }) {
  if (!dropped.length) return { disconnected: 0, reconnectMs: quantiles([]), recoveryTimeMs: 0, totalDowntimeMs: 0 };
  const back = dropped.filter((t) => t.connected && t.backAt >= t.firstDropAt);
  const firstDrop = Math.min(...dropped.map((t) => t.firstDropAt));
  const backs = back.map((t) => t.backAt).sort((a, b) => a - b);
  const need = Math.ceil(dropped.length * 0.95);
  return {
    disconnected: dropped.length,
    reconnectMs: quantiles(back.map((t) => t.backAt - t.firstDropAt)),
    recoveryTimeMs: backs.length >= need ? backs[need - 1]! - firstDrop : o.recoveryTimeoutMs,
    totalDowntimeMs: o.downtimeMs,
  };
}

export type BenchmarkAvalancheFields = ReturnType<typeof benchmarkAvalancheFields>;
