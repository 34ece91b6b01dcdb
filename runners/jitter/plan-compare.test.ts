import { describe, expect, it } from 'vitest';
import { benchArgs, PLAN_ARGS } from '../../bench/proxy-compare.ts';
import { PLAN_KINDS } from '../../chaos/plans/catalog.ts';
import { comparePairs, compareRounds, type CompareRow } from './plan-compare.ts';

const row = (o: Partial<CompareRow>): CompareRow => ({
  plan: 'partition', proxy: 'rebound', round: 1, target: 'ws', deliveryRatePct: 80, lostDeliveries: 0, affectedClients: 10,
  detectP50Ms: 5, recoverP50Ms: 2000, recoverCount: 10, latencyP50Ms: 8, latencyP95Ms: 20, undetected: 0, unrecovered: 0, valid: true, ...o,
});

describe('proxy comparison', () => {
  it('has bench arguments for every network plan', () => {
    for (const k of PLAN_KINDS.filter((d) => d !== 'drop')) expect(PLAN_ARGS[k], k).toBeDefined();
    // A plan's value replaces the shared one (npm run bench refuses a flag given twice).
    expect(benchArgs(['--msgs', '60', '--seed', '7'], ['--msgs', '120', '--plan', 'x'])).toEqual(['--msgs', '120', '--seed', '7', '--plan', 'x']);
  });

  it('pairs Rebound with Toxiproxy in the same round and applies the goal (0.5 points, 10 %)', () => {
    const rows = [
      row({}), row({ proxy: 'toxiproxy', deliveryRatePct: 80.4, recoverP50Ms: 2200 }),
      row({ target: 'replay', recoverP50Ms: 2300 }), row({ target: 'replay', proxy: 'toxiproxy', recoverP50Ms: 2000 }),
      row({ target: 'socketio', deliveryRatePct: 79 }), row({ target: 'socketio', proxy: 'toxiproxy', deliveryRatePct: 80 }),
      row({ round: 2, proxy: 'toxiproxy' }), // no Rebound partner in round 2: not paired
    ];
    const pairs = comparePairs(rows);
    expect(pairs).toHaveLength(3);
    expect(pairs[0]).toMatchObject({ target: 'ws', deliveryDiffPts: 0.4, recoverDiffPct: 9.1, goalMet: true });
    expect(pairs[1]).toMatchObject({ target: 'replay', recoverDiffPct: 15, goalMet: false });
    expect(pairs[2]).toMatchObject({ target: 'socketio', deliveryDiffPts: 1, goalMet: false });
  });

  it('measures each proxy against its own first round', () => {
    const rows = [row({}), row({ round: 2, recoverP50Ms: 2100, deliveryRatePct: 79.75 }), row({ proxy: 'toxiproxy' }), row({ proxy: 'toxiproxy', round: 2 })];
    expect(compareRounds(rows)).toEqual([
      { plan: 'partition', target: 'ws', proxy: 'rebound', round: 2, deliveryDiffPts: 0.25, recoverDiffPct: 5 },
      { plan: 'partition', target: 'ws', proxy: 'toxiproxy', round: 2, deliveryDiffPts: 0, recoverDiffPct: 0 },
    ]);
  });
});
