import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../bench/idle-local-fleet.ts';
import { checkPrediction } from './costs.ts';

/**
 * A `*.quiet.test.ts` file: what it measures is machine-wide (the kernel's socket count and Slab),
 * so it is kept out of the parallel `npm test` run, where other files open and close thousands of
 * sockets meanwhile, and `.ci/run` runs it alone afterwards (REBOUND_QUIET_TESTS=1, see
 * vitest.config.ts).
 */
const quiet = () => {};
const tmp = () => mkdtempSync(join(tmpdir(), 'rr-local-fleet-'));

describe('local fleet cost table (alone on the machine)', () => {
  // The connection count behind every term is the kernel's, namespace-wide (/proc/net/sockstat):
  // this test needs no other job opening or closing thousands of sockets on the machine meanwhile.
  it("the cost table's formula predicts a measured run: terms at 2,000 give the total at 4,000 within 10%", async () => {
    const out = tmp();
    const { result: r } = await main(['--n', '4000', '--shards', '2', '--hold', '3', '--ramp', '1000', '--milestones', '2000', '--out', out], quiet);
    const rows = r!.costTable.rows;
    const half = rows.find((x) => x.milestone === 2000)!;
    const last = rows.find((x) => x.milestone === 'max')!;
    expect(half.conns).toBeGreaterThanOrEqual(2000);
    expect(last.conns).toBeGreaterThanOrEqual(4000);
    for (const x of rows) {
      // Every term is measured, positive and in a sane range for an idle connection (bytes).
      expect(x.kernelBytesPerConn).toBeGreaterThan(500);
      expect(x.kernelBytesPerConn).toBeLessThan(100_000);
      expect(x.runnerBytesPerConn).toBeGreaterThan(0);
      // The row is its own formula: baselines + N x terms is what was measured at N.
      expect(Math.abs(x.predictedTotalBytes - x.measuredTotalBytes)).toBeLessThan(x.conns * 4);
    }
    const p = checkPrediction(r!.costTable, half, last);
    // Stated tolerance: the total within 10%; the connection-dependent part alone within 60%
    // (a few MB of GC timing on a shared 2-core box is a large share of 4,000 x ~20 KB).
    expect(p.error).toBeLessThan(0.1);
    expect(p.variableError).toBeLessThan(0.6);
    expect(r!.prediction).not.toBeNull();
  }, 180_000);
});
