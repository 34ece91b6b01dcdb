import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../lib/rng.ts';
import { strategyDelayMs as backoffMs } from '../../engine/targets/reconnect.ts';
import type { ClientTrack } from '../../engine/session/client-pool.ts';
import { downtime, peakRatePerSec, recoveryTimes, timeToPct } from './herd.ts';
import { quantiles } from '../../engine/session/client-pool.ts';

const track = (t: Partial<ClientTrack>): ClientTrack => ({ connected: true, connectedAtRestart: true, drops: 1, firstDropAt: 1000, backAt: 0, attempts: 1, attemptStartedAt: 0, ...t });

describe('herd arithmetic', () => {
  it('quantiles use the benchmark\'s floor((n-1)p/100) element', () => {
    expect(quantiles([5, 1, 4, 2, 3])).toEqual({ count: 5, p50: 3, p95: 4, p99: 4, max: 5 });
    expect(quantiles([])).toEqual({ count: 0, p50: 0, p95: 0, p99: 0, max: 0 });
  });

  it('time to X% reconnected counts the dropped clients, null when never reached', () => {
    const back = [1100, 1200, 1300];
    expect(timeToPct(back, 4, 1000, 50)).toBe(200);
    expect(timeToPct(back, 4, 1000, 95)).toBeNull();
    expect(timeToPct(back, 3, 1000, 100)).toBe(300);
    expect(timeToPct([], 0, 1000, 100)).toBe(0);
  });

  it('peak reconnect rate is the densest 1 s window', () => {
    expect(peakRatePerSec([0, 100, 999, 1000, 5000])).toBe(3);
    expect(peakRatePerSec([])).toBe(0);
  });

  it('recovery is measured from each client\'s own node restart and skips clients still out', () => {
    const tracks = [track({ backAt: 1500 }), track({ backAt: 4000 }), track({ connected: false }), track({ drops: 0, backAt: 0 })];
    expect(recoveryTimes(tracks, (i) => (i === 1 ? 3000 : 1000))).toEqual([500, 1000]);
  });

  it('downtime runs first drop to last reconnect, open-ended while someone is out', () => {
    expect(downtime([track({ firstDropAt: 1000, backAt: 2000 }), track({ firstDropAt: 1200, backAt: 3000 })], 9000)).toEqual({ downtimeMs: 2000, openEnded: false });
    expect(downtime([track({ firstDropAt: 1000, backAt: 2000 }), track({ firstDropAt: 1200, connected: false })], 9000)).toEqual({ downtimeMs: 8000, openEnded: true });
    expect(downtime([track({ drops: 0 })], 9000)).toEqual({ downtimeMs: 0, openEnded: false });
  });

  it('runner-driven backoff: socket.io-client\'s default (1 s x2 +-50%, cap 5 s) and tuned (full jitter under 500 ms x2, cap 5 s)', () => {
    const rng = mulberry32(1);
    for (let k = 0; k < 8; k++) {
      const d = backoffMs('default', k, rng);
      expect(d).toBeGreaterThanOrEqual(Math.min(5000, 500 * 2 ** k));
      expect(d).toBeLessThanOrEqual(5000);
      const t = backoffMs('tuned', k, rng);
      expect(t).toBeGreaterThanOrEqual(0);
      expect(t).toBeLessThan(Math.min(5000, 500 * 2 ** k));
    }
  });
});
