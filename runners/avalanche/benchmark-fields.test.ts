import { describe, expect, it } from 'vitest';
import { benchmarkAvalancheFields } from './benchmark-fields.ts';

const track = (firstDropAt: number, backAt: number, connected = true) => ({ connected, firstDropAt, backAt });

describe("the benchmark's avalanche fields", () => {
  it('recoveryTimeMs runs from the first disconnect to the 95th-percentile client back', () => {
    // 20 clients dropped at 1000..1019, back 100 ms apart: the 19th back (ceil(0.95 × 20)) is at 2900.
    const t = Array.from({ length: 20 }, (_, i) => track(1000 + i, 1000 + (i + 1) * 100));
    const f = benchmarkAvalancheFields(t, { recoveryTimeoutMs: 60_000, downtimeMs: 2000 });
    expect(f).toMatchObject({ disconnected: 20, recoveryTimeMs: 1900, totalDowntimeMs: 2000 });
    expect(f.reconnectMs).toMatchObject({ count: 20, max: 1981 });
  });

  it('is the deadline when fewer than 95% come back, and 0 everywhere without a disconnect', () => {
    const t = [track(0, 500), ...Array.from({ length: 9 }, () => track(0, 0, false))];
    expect(benchmarkAvalancheFields(t, { recoveryTimeoutMs: 30_000, downtimeMs: 30_000 })).toMatchObject({ disconnected: 10, recoveryTimeMs: 30_000, reconnectMs: { count: 1, p50: 500 } });
    expect(benchmarkAvalancheFields([], { recoveryTimeoutMs: 30_000, downtimeMs: 0 })).toEqual({ disconnected: 0, reconnectMs: { count: 0, p50: 0, p95: 0, p99: 0, max: 0 }, recoveryTimeMs: 0, totalDowntimeMs: 0 });
  });
});
