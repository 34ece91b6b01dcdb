import { describe, expect, it } from 'vitest';
import { withTarget } from '../../engine/measure/local-target.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { LATENCY_OPTIONS, parseLatencyOptions } from './options.ts';
import { runLatency } from './run.ts';

describe('latency runner', () => {
  it('has no chaos options at all', () => {
    expect(Object.keys(LATENCY_OPTIONS)).not.toContain('jitter');
    expect(Object.keys(LATENCY_OPTIONS)).not.toContain('plan');
    expect(() => parseLatencyOptions({ values: { jitter: '5' }, origin: 'test' })).toThrow(/unknown test option "jitter"/);
  });

  it('replay: undisturbed clients get every message once; raw and over-min latency', async () => {
    const o = parseLatencyOptions({ values: { target: 'replay', n: '15', msgs: '20', interval: '50', settle: '2000', seed: '9' }, origin: 'test' });
    const r = await withTarget(getTarget('replay'), undefined, (url) => runLatency(o, url));
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r).toMatchObject({ test: 'latency', target: 'replay', connectedClients: 15, published: 20, expectedDeliveries: 300, receivedDeliveries: 300, lostDeliveries: 0, jitterEvents: 0, reconnects: 0, duplicates: 0 });
    expect(r.latencyRawMs.count).toBe(300);
    expect(r.latencyOverMinMs.p99).toBeCloseTo(r.latencyRawMs.p99 - r.skewFloor, 3);
  });
});
