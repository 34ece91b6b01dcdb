import { performance } from 'node:perf_hooks';
import { callShard, joinUrl } from './http.ts';
import type { ShardClock } from '../merge/types.ts';

/**
 * Where Date.now() stands against performance.now(), to a few microseconds: the moment Date.now()
 * ticks over to a new millisecond is found by polling both. timeOrigin + now() alone is not the
 * wall clock: it is fixed at process start while Date.now() follows NTP's slewing, so in a
 * long-lived process the two part by milliseconds (seen: 2.5 ms), which an exchange measuring a
 * shard's Date.now() would book as that shard's offset.
 *
 * The tick lies between the poll that still read the old millisecond and the first that read the
 * new one. A busy machine can deschedule the thread between two polls, and then that pair bounds
 * nothing (a loaded CI run anchored 7 ms off): such a tick is skipped and the next one taken.
 * Bounded: a tick comes every millisecond, and after MAX_TICKS the tightest pair seen is used.
 */
const TIGHT_POLL_MS = 0.05;
const MAX_TICKS = 25;
export function wallAnchor(): number {
  let best = { gap: Infinity, anchor: Date.now() - performance.now() };
  for (let tick = 0; tick < MAX_TICKS; tick++) {
    const old = Date.now();
    let prevP = performance.now();
    for (let i = 0; i < 1_000_000; i++) {
      const t = Date.now();
      const p = performance.now();
      if (t !== old) {
        const gap = p - prevP;
        if (gap < best.gap) best = { gap, anchor: t - (prevP + p) / 2 };
        break;
      }
      prevP = p;
    }
    if (best.gap < TIGHT_POLL_MS) break;
  }
  return best.anchor;
}

/**
 * Sub-millisecond wall clock (Date.now()'s clock, the one the runner stamps `sentAt`/arrivals
 * with), from a fresh anchor. One per round of exchanges, shared by every shard's: the anchor's
 * poll blocks the event loop for about 1 ms (more only on a machine too busy to poll), which would
 * otherwise land inside the other shards' round trips; a round is short, so slewing within it is
 * negligible.
 */
export function wallClock(): () => number {
  const anchor = wallAnchor();
  return () => anchor + performance.now();
}

export type ClockSample = Pick<ShardClock, 'offsetMs' | 'rttMs'>;

/**
 * NTP-style exchange against a shard's `GET /time` ({now}: its Date.now(), ms): offset =
 * server time − midpoint of our send and receive; the true offset lies within ±rtt/2 of it. The
 * sample with the smallest round trip is kept (least queueing, tightest bound).
 */
export async function measureOffset(url: string, exchanges = 8, timeoutMs = 2000, nowMs: () => number = wallClock()): Promise<ClockSample> {
  let best: ClockSample | undefined;
  let lastError = '';
  for (let i = 0; i < exchanges; i++) {
    const t0 = nowMs();
    const r = await callShard(joinUrl(url, '/time'), { timeoutMs });
    const t3 = nowMs();
    const now = (r.json as { now?: unknown } | undefined)?.now;
    if (r.status !== 200 || typeof now !== 'number') {
      lastError = r.error ?? `GET /time answered ${r.status}: ${r.snippet}`;
      continue;
    }
    // /time serves Date.now(), whole ms, truncated: the true time lies in [now, now + 1), so the
    // centre is taken and its half millisecond joins the uncertainty (as half a round trip).
    const whole = Number.isInteger(now);
    const s = { offsetMs: now + (whole ? 0.5 : 0) - (t0 + t3) / 2, rttMs: t3 - t0 + (whole ? 1 : 0) };
    if (!best || s.rttMs < best.rttMs) best = s;
  }
  if (!best) throw new Error(`clock exchange with ${url} failed: ${lastError}`);
  return best;
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

/**
 * Combine the exchanges before and after the run: the offset is their mean; its uncertainty is
 * the worse half round trip plus half the drift between them (a clock that moved during the run
 * was somewhere in between while latencies were recorded).
 */
export function combineClock(before: ClockSample, after: ClockSample): ShardClock {
  const drift = Math.abs(after.offsetMs - before.offsetMs);
  return {
    offsetMs: r3((before.offsetMs + after.offsetMs) / 2),
    uncertaintyMs: r3(Math.max(before.rttMs, after.rttMs) / 2 + drift / 2),
    rttMs: r3(Math.min(before.rttMs, after.rttMs)),
    beforeMs: r3(before.offsetMs),
    afterMs: r3(after.offsetMs),
  };
}
