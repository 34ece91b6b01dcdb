import { describe, expect, it } from 'vitest';
import { withTarget } from '../../engine/measure/local-target.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { parseThroughputOptions } from './options.ts';
import { runThroughput } from './run.ts';

describe('throughput runner', () => {
  for (const [target, publisher] of [
    ['replay', 'pool'],
    ['socketio', 'serial'],
  ] as const) {
    it(`${target} via the ${publisher} publisher: every message to every client, rates over the publishing window`, async () => {
      const o = parseThroughputOptions({ values: { target, n: '30', total: '40', interval: '10', drain: '5', publisher, 'publisher-concurrency': '4' }, origin: 'test' });
      const r = await withTarget(getTarget(target), undefined, (url) => runThroughput(o, url));
      expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
      expect(r).toMatchObject({ test: 'throughput', connectedClients: 30, published: 40, expectedDeliveries: 1200, receivedDeliveries: 1200, lostDeliveries: 0, duplicates: 0, intervalMs: 10, targetRateMsgPerSec: 100 });
      expect(r.usefulDeliveriesPerSec).toBe(Math.round((1200 * 1000) / r.publishingMs));
      expect(r.outboundDeliveriesPerSec).toBe(r.usefulDeliveriesPerSec);
      expect(r.latencyHistogram.count).toBe(1200);
      expect(r.lossByCause).toEqual({});
    });
  }

  it('reports what the target refused (NOTHING_PUBLISHED) when the broadcast key is wrong', async () => {
    const o = parseThroughputOptions({ values: { target: 'ws', n: '3', total: '5', interval: '10', drain: '0.5', broadcastKey: 'wrong' }, origin: 'test' });
    const { startService } = await import('../../services/common/spawn.ts');
    const svc = await startService('ws', { env: { BROADCAST_KEY: 'right' } });
    try {
      const r = await runThroughput(o, svc.httpUrl);
      expect(r.published).toBe(0);
      expect(r.publishFailures).toBe(5);
      expect(r.validity.flags.map((f) => f.code)).toContain('NOTHING_PUBLISHED');
    } finally {
      await svc.stop();
    }
  });
});
