import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '../../../services/common/redis-testing.ts';
import { getTarget } from '../../targets/index.ts';
import { scenario as s3 } from './s3-fanout.ts';

/**
 * S3 on the replay server's Redis broker with two nodes (issue 13's fan-out): each stream's
 * subscribers alternate over the nodes and batches go to either node, so half of every stream's
 * deliveries must cross Redis. The test's own redis-server, shared through REDIS_URL.
 */
let redis: TestRedis;
const saved = process.env.REDIS_URL;
beforeAll(async () => {
  redis = await startTestRedis();
  process.env.REDIS_URL = redis.url;
});
afterAll(async () => {
  if (saved === undefined) delete process.env.REDIS_URL;
  else process.env.REDIS_URL = saved;
  await redis.close();
});

describe('S3 on replay-redis', () => {
  it.each([1, 2])('with %i node(s) delivers every accepted message to every subscriber once', async (nodes) => {
    const r = await s3.run({ target: getTarget('replay-redis'), seed: 3, signal: new AbortController().signal, log: () => undefined, progress: () => undefined }, s3.parse({ connections: 40, streams: 4, rates: '40', stepSec: 1, drainMs: 500, loaders: 2, nodes, maxP99Ms: 60_000, maxLoaderLagMs: 60_000, maxLoaderCpuPct: 1000, maxPublisherLateMs: 60_000 }));
    const s = r.steps[0]!;
    expect(s.pass).toBe(true);
    expect(s.ledger!.expectedDeliveries).toBe(Number(s.metrics.published) * 10);
    expect(s.ledger).toMatchObject({ lostDeliveries: 0, duplicates: 0, foreign: 0 });
    expect(r.params.nodes).toBe(nodes);
  });
});
