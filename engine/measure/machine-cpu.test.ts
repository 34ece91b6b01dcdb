import { describe, expect, it } from 'vitest';
import { watchMachineCpu } from './machine-cpu.ts';

describe('watchMachineCpu', () => {
  it('a window with a busy loop in it shows busy time, and busy + idle add up to 100%', async () => {
    const w = watchMachineCpu();
    const until = Date.now() + 300;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    const m = w.stop()!;
    expect(x).toBeGreaterThan(0);
    expect(m.cores).toBeGreaterThanOrEqual(1);
    // One core spun for the whole window: at least ~1/cores of the machine was busy.
    expect(m.busyPct).toBeGreaterThan(100 / m.cores / 2);
    expect(m.busyPct + m.idlePct).toBeCloseTo(100, 0);
  });
});
