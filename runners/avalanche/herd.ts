import { summarize } from '../../engine/measure/latency.ts';
import { droppedTracks, quantiles, type ClientFleet, type ClientTrack } from '../../engine/session/client-pool.ts';

/** One point of the herd curve: share of the clients dropped by the restart that are connected again. */
export interface SeriesPoint {
  /** ms since the restart began (negative before it). */
  tMs: number;
  connected: number;
  reconnectedPct: number;
}

/**
 * Recovery per dropped client: restart of its node to connected and resubscribed (the adapter's
 * `connected` event), for those that are connected at the end.
 */
export function recoveryTimes(tracks: readonly ClientTrack[], restartAtOf: (i: number) => number): number[] {
  return tracks.flatMap((t, i) => (t.connectedAtRestart && t.drops > 0 && t.connected && t.backAt ? [Math.max(0, t.backAt - restartAtOf(i))] : []));
}

/** First drop to last reconnect; open-ended (to `endAt`) when some client never came back. */
export function downtime(tracks: readonly ClientTrack[], endAt: number): { downtimeMs: number; openEnded: boolean } {
  const dropped = droppedTracks(tracks);
  if (!dropped.length) return { downtimeMs: 0, openEnded: false };
  const first = Math.min(...dropped.map((t) => t.firstDropAt));
  const never = dropped.some((t) => !t.connected);
  const last = never ? endAt : Math.max(...dropped.map((t) => t.backAt));
  return { downtimeMs: Math.max(0, last - first), openEnded: never };
}

/** Time from `restartAt` until `pct`% of `dropped` clients were back, from sorted back times. */
export function timeToPct(backTimes: readonly number[], dropped: number, restartAt: number, pct: number): number | null {
  if (dropped === 0) return 0;
  const need = Math.ceil((pct / 100) * dropped);
  const s = [...backTimes].sort((a, b) => a - b);
  return s.length >= need ? Math.round(Math.max(0, s[need - 1]! - restartAt)) : null;
}

/** Most reconnects completed in any 1 s window starting at a reconnect (exact sliding window). */
export function peakRatePerSec(times: readonly number[]): number {
  const s = [...times].sort((a, b) => a - b);
  let best = 0;
  let j = 0;
  for (let i = 0; i < s.length; i++) {
    while (s[j]! <= s[i]! - 1000) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

/** The herd from the fleet's tracks and counts: `endAt` is when the wait for it ended. */
export function herdReport(fleet: Pick<ClientFleet, 'tracks' | 'handshakeFailures' | 'connectLatency'>, restartAt: number, series: SeriesPoint[], endAt: number) {
  const dropped = droppedTracks(fleet.tracks);
  const back = dropped.filter((t) => t.connected && t.backAt).map((t) => t.backAt);
  const attempts = dropped.map((t) => t.attempts);
  const aq = quantiles(attempts);
  const total = attempts.reduce((a, b) => a + b, 0);
  const connectLatency = fleet.connectLatency.encode();
  const lat = summarize(connectLatency).latencyRawMs;
  const pending = dropped.filter((t) => !t.connected && t.attemptStartedAt > 0).map((t) => endAt - t.attemptStartedAt);
  const timeTo = (pct: number) => timeToPct(back, dropped.length, restartAt, pct);
  return {
    /** Connect attempts per dropped client after the restart began (successful attempts included). */
    attemptsPerClient: { total, mean: attempts.length ? Math.round((total / attempts.length) * 100) / 100 : 0, p50: aq.p50, p95: aq.p95, max: aq.max, observed: attempts.some((a) => a > 0) },
    /** Failed connect attempts during the herd by kind: refused, reset, timeout, http_<status>, subscribe_failed, ... */
    handshakeFailures: fleet.handshakeFailures,
    /** Time from the restart until 50/95/99/100% of the dropped clients were back; null when never reached. */
    timeToReconnectedMs: { p50: timeTo(50), p95: timeTo(95), p99: timeTo(99), p100: timeTo(100) },
    peakReconnectRatePerSec: peakRatePerSec(back),
    /**
     * Dropped clients still out at the end whose last connect attempt never finished (neither
     * connected nor failed): a handshake hanging on the server side, not a client that gave up.
     */
    pendingAttempts: { count: pending.length, oldestMs: pending.length ? Math.max(...pending) : 0 },
    /** Attempt start to connected and subscribed, for attempts made during the herd. */
    connectLatencyMs: { count: lat.count, p50: Math.round(lat.p50), p95: Math.round(lat.p95), p99: Math.round(lat.p99), max: Math.round(lat.max), histogram: connectLatency },
    series,
  };
}

/**
 * Samples connected clients while the herd runs so a report can chart it. Bounded: past
 * `maxPoints` samples the interval doubles and every other point is dropped.
 */
export class SeriesSampler {
  readonly points: SeriesPoint[] = [];
  private timer: NodeJS.Timeout | undefined;
  private restartAt = 0;
  private base = 0;

  constructor(private readonly connected: () => number, private intervalMs = 250, private readonly maxPoints = 2000) {}

  /** Start sampling; `base` is the number of clients that count as 100% (connected at the restart). */
  start(restartAt: number, base: number): void {
    this.restartAt = restartAt;
    this.base = base;
    this.sample();
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.sample();
      if (this.points.length >= this.maxPoints) {
        for (let i = 1; i < this.points.length; i++) this.points.splice(i, 1);
        this.intervalMs *= 2;
      }
      this.schedule();
    }, this.intervalMs);
    this.timer.unref();
  }

  sample(): void {
    const c = this.connected();
    this.points.push({ tMs: Date.now() - this.restartAt, connected: c, reconnectedPct: this.base ? Math.round((Math.min(c, this.base) / this.base) * 10000) / 100 : 100 });
  }

  stop(): SeriesPoint[] {
    if (this.timer) clearTimeout(this.timer);
    this.sample();
    return this.points;
  }
}
