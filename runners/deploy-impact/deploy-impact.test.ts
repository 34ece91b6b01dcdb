import { describe, expect, it } from 'vitest';
import { parseDeployImpactOptions } from './options.ts';
import type { DeployImpactResult } from './result.ts';
import { deployValidity, runDeployImpact } from './run.ts';

/**
 * The publisher process is SIGKILLed mid-run while real clients stay on a real server: nothing
 * drops, the messages due while the publisher was down are its gap, the server loses nothing.
 */
// publish-after leaves room for a slow process start on a loaded machine: the new publisher must
// come up before the schedule ends.
const SMALL = { clients: '20', rate: '10', warmupMs: '1500', publisherDownMs: '1000', publishAfterMs: '12000', settleMs: '3000', seed: '11' };
const run = (target: string) => runDeployImpact(parseDeployImpactOptions({ values: { ...SMALL, target }, origin: 'test' })).result;

describe('deploy-impact: the standalone publisher restarts, the realtime server does not', () => {
  const results = Promise.all(['ws', 'replay'].map(run));

  it.each([['ws', 0], ['replay', 1]] as const)('%s: 0 dropped connections, the gap is the publisher\'s, the server loses nothing', async (name, i) => {
    const r: DeployImpactResult = (await results)[i]!;
    expect(r.target).toBe(name);
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.connectFailures).toBe(0);
    expect(r.droppedConnections).toBe(0);
    const p = r.publisher;
    expect(p.ok).toBe(true);
    expect(p.newPid).not.toBe(p.oldPid);
    // Down for at least the deploy's 1 s, and the schedule's messages due meanwhile were never sent.
    expect(p.downtimeMs!).toBeGreaterThanOrEqual(1000);
    expect(p.gapMessages).toBeGreaterThanOrEqual(9);
    expect(p.gapSeqs!.to - p.gapSeqs!.from + 1).toBe(p.gapMessages);
    expect(p.resumedAtSeq).toBe(p.gapSeqs!.to + 1);
    // Expected deliveries count only what the publisher got accepted.
    expect(r.published + p.gapMessages).toBeLessThanOrEqual(r.totalMessages);
    expect(r.expectedDeliveries).toBe(r.clients * r.published);
    expect(r.lostDeliveries).toBe(0);
    // The publisher's gap is not the server's loss: nothing to book to a cause.
    expect(r.lossByCause).toEqual({});
    expect(r.deliveryRatePct).toBe(100);
    expect(r.duplicates).toBe(0);
    // Clients saw the gap as a pause about as long as the publisher's downtime.
    expect(r.deliveryGapMs.p50).toBeGreaterThanOrEqual(900);
    expect(r.deliveryGapMs.max).toBeLessThan(p.downtimeMs! + 1000);
  });

  it('a publisher that never comes back marks the run invalid (RESTART_FAILED)', async () => {
    const r = (await results)[0]!;
    const { validity: _v, ...rest } = r;
    const v = deployValidity({ ...rest, publisher: { ...r.publisher, ok: false, error: 'the new publisher never got a message accepted' } });
    expect(v.valid).toBe(false);
    expect(v.flags.map((f) => f.code)).toContain('RESTART_FAILED');
    expect(v.flags.find((f) => f.code === 'RESTART_FAILED')!.severity).toBe('fatal');
  });

  it('rejects a deploy longer than the publishing that follows it', () => {
    expect(() => parseDeployImpactOptions({ values: { target: 'ws', publisherDownMs: '5000', publishAfterMs: '4000' }, origin: 'CLI' })).toThrow(/must be shorter than publish-after-ms/);
  });
});
