import { describe, expect, it } from 'vitest';
import { useTestRedisEnv } from '../../services/common/redis-test-env.ts';
import { withTarget } from '../measure/local-target.ts';
import { parseJitterOptions } from '../../runners/jitter/options.ts';
import { runJitter } from '../../runners/jitter/run.ts';
import type { JitterResult } from '../../runners/jitter/result.ts';
import { getTarget, localTargets } from './index.ts';

/**
 * The Redis targets end to end at small scale: the runner starts each service on a real
 * redis-server of the test's own (REDIS_URL) and drops clients; what each stack loses shows.
 */
useTestRedisEnv();

const SMALL = { clients: '10', msgs: '40', interval: '150', jitter: '2', 'jitter-ms': '1000', ramp: '200', settle: '8000', seed: '1313' };
const run = (target: string): Promise<JitterResult> =>
  withTarget(getTarget(target), undefined, (url) => runJitter(parseJitterOptions({ values: { ...SMALL, target }, origin: 'test' }), url).result);

describe('Redis targets (jitter, small)', () => {
  it('are opt-in: not in the default local target set', () => {
    const names = localTargets().map((t) => t.name);
    for (const n of ['socketio-redis', 'socketio-csr-redis', 'replay-redis']) {
      expect(names).not.toContain(n);
      expect(getTarget(n).service).toBeDefined();
    }
  });

  it('socketio-redis loses what was published while offline; socketio-csr-redis and replay-redis lose nothing', async () => {
    const [sio, csr, replay] = await Promise.all(['socketio-redis', 'socketio-csr-redis', 'replay-redis'].map(run));
    for (const r of [sio!, csr!, replay!]) {
      expect(r.validity.valid, `${r.target}: ${JSON.stringify(r.validity)}`).toBe(true);
      expect(r.connectFailures).toBe(0);
      expect(r.published).toBe(40);
      expect(r.lostDeliveries + r.receivedDeliveries).toBe(r.expectedDeliveries);
    }
    expect(sio!.lostDeliveries).toBeGreaterThan(0);
    for (const r of [csr!, replay!]) {
      expect(r.lostDeliveries, r.target).toBe(0);
      expect(r.duplicates, r.target).toBe(0);
      expect(r.deliveryRatePct).toBe(100);
    }
  });
});
