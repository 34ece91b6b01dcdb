import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from '../../lib/time.ts';
import { startTestRedis, type TestRedis } from '../../services/common/redis-testing.ts';
import { RedisBroker } from '../../services/replay-server/broker/redis.ts';
import { startTestServer, type TestServer } from '../../services/replay-server/testing.ts';
import { parseJitterOptions } from './options.ts';
import { runJitter } from './run.ts';

/**
 * The jitter runner books a broker's empty restart under BROKER_EPOCH_CHANGED: a replay server on
 * a real redis-server (Redis broker), the official client with drops, Redis killed mid-run and
 * restarted with no persistence. The run says so (never `valid` with nothing said) and keeps
 * loss after Redis returned as the target's (none here).
 */
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

describe('jitter runner: Redis restarted empty under a replay target', () => {
  it('result carries brokerEpoch (old -> new, counts) and validity BROKER_EPOCH_CHANGED; 0 plain loss', async () => {
    const redis: TestRedis = await startTestRedis();
    cleanup.push(() => redis.close());
    const broker = new RedisBroker({ historyLimit: 500, historyTtlSec: 300, sessionTtlSec: 300, url: redis.url, probeIntervalMs: 200 });
    await broker.connect();
    cleanup.push(() => broker.close());
    const t: TestServer = await startTestServer({}, { broker });
    cleanup.push(() => t.close());
    const opts = parseJitterOptions({ values: { target: 'replay', clients: '10', msgs: '80', interval: '100', jitter: '2', 'jitter-ms': '1000', ramp: '200', settle: '6000', seed: '77', 'allow-publish-failures': 'true', 'reconnect-strategy': 'tuned' }, origin: 'test' });
    const run = runJitter(opts, t.httpUrl);
    let publishing = false;
    run.events.on('phase', (p) => void (p === 'publish' && (publishing = true)));
    for (let i = 0; !publishing && i < 200; i++) await sleep(50);
    await sleep(3000);
    await redis.stop('SIGKILL');
    await sleep(1500);
    await redis.start();
    const r = await run.result;
    expect(r.brokerEpoch?.changes).toHaveLength(1);
    const flag = r.validity.flags.find((f) => f.code === 'BROKER_EPOCH_CHANGED');
    expect(flag, JSON.stringify(r.validity)).toMatchObject({ severity: 'warning' });
    expect(flag!.message).toContain(`${r.brokerEpoch!.changes[0]!.from} -> ${r.brokerEpoch!.changes[0]!.to}`);
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.publishFailures).toBeGreaterThan(0);
    expect(r.brokerEpoch!.plainLostDeliveries).toBe(0);
    expect(r.brokerEpoch!.lostAfterBoundaryDeliveries).toBe(0);
    expect(r.brokerEpoch!.lostDeliveries).toBe(r.lostDeliveries);
    // The same deliveries, by cause: all of them the epoch change's.
    expect(r.lossByCause).toEqual(r.lostDeliveries ? { epoch_changed: r.lostDeliveries } : {});
    expect(r.duplicates).toBe(0);
  }, 60_000);
});
