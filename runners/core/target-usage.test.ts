import { describe, expect, it } from 'vitest';
import { watchTarget } from './target-usage.ts';

describe.skipIf(process.platform !== 'linux')('watchTarget', () => {
  it('samples a real process\'s RSS and CPU from /proc, times relative to publish start', async () => {
    const start = Date.now();
    const w = watchTarget(process.pid, 50);
    // Busy for a while so CPU shows, yielding so the sampler runs.
    for (let i = 0; i < 8; i++) {
      const until = Date.now() + 40;
      while (Date.now() < until);
      await new Promise((r) => setTimeout(r, 20));
    }
    const u = w.stop(start)!;
    expect(u.tSec.length).toBeGreaterThan(2);
    expect(u.tSec[0]).toBeGreaterThan(0);
    expect(Math.min(...u.rssMb)).toBeGreaterThan(10);
    expect(Math.max(...u.cpuPct)).toBeGreaterThan(10);
  });

  it('a pid that does not exist yields no series', async () => {
    const w = watchTarget(2 ** 22 + 12345, 20);
    await new Promise((r) => setTimeout(r, 80));
    expect(w.stop(0)).toBeNull();
  });
});
