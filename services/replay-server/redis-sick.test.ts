import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '../common/redis-testing.ts';
import { RedisBroker, type RedisBrokerOptions } from './broker/redis.ts';
import { useTestServers } from './test-fixture.ts';

/**
 * A sick Redis under a running replay server (in process, real redis-server): a hung Redis
 * (SIGSTOP) and a full one (OOM) are seen at once on /health, and /_broadcast answers within its
 * deadline, 201 only for what was stored.
 */

let redis: TestRedis;
let seq = 0;
const t = useTestServers();
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.close();
});
afterEach(() => {
  // A test that fails while Redis is stopped must not hang the next one.
  redis.signal('SIGCONT');
});

async function nodeOn(opts: Partial<RedisBrokerOptions> = {}) {
  const broker = new RedisBroker({ historyLimit: 100, historyTtlSec: 300, sessionTtlSec: 300, url: redis.url, prefix: `sick${++seq}:`, commandTimeoutMs: 1000, probeIntervalMs: 500, ...opts });
  await broker.connect();
  t.closeLater(() => broker.close());
  const s = await t.start({}, { broker });
  return { s, broker };
}
const health = async (url: string) => {
  const r = await fetch(`${url}/health`);
  return { status: r.status, body: (await r.json()) as { status: string; reason?: string } };
};
async function timeUntil(cond: () => Promise<boolean>, ms: number): Promise<number> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - t0;
}

describe('replay server on a sick Redis', () => {
  it('SIGSTOP: /health degraded within 2 s, /_broadcast 503 within its deadline (never a late 201), all well after SIGCONT', async () => {
    const { s } = await nodeOn();
    expect((await s.broadcast({ stream: 'st', data: '"a"' })).status).toBe(201);
    expect((await health(s.httpUrl)).status).toBe(200);
    redis.signal('SIGSTOP');
    try {
      const t0 = Date.now();
      const r = await s.broadcast({ stream: 'st', data: '"b"' });
      const took = Date.now() - t0;
      expect(r.status).toBe(503);
      expect(await r.text()).toMatch(/may have been stored/);
      expect(took).toBeLessThan(1500);
      const degradedAfter = await timeUntil(async () => (await health(s.httpUrl)).status === 503, 2000);
      expect(degradedAfter).toBeLessThan(2000);
      expect((await health(s.httpUrl)).body).toMatchObject({ status: 'degraded', reason: expect.stringMatching(/within 1000 ms/) });
    } finally {
      redis.signal('SIGCONT');
    }
    await timeUntil(async () => (await health(s.httpUrl)).status === 200, 3000);
    expect((await s.broadcast({ stream: 'st', data: '"c"' })).status).toBe(201);
  });

  it('a health probe that is not a command: degraded within 2 s of a stall even with no traffic', async () => {
    const { s } = await nodeOn();
    redis.signal('SIGSTOP');
    try {
      expect(await timeUntil(async () => (await health(s.httpUrl)).status === 503, 2000)).toBeLessThan(2000);
    } finally {
      redis.signal('SIGCONT');
    }
    await timeUntil(async () => (await health(s.httpUrl)).status === 200, 3000);
  });

  it('OOM (maxmemory + noeviction): /health degraded with the cause, /_broadcast 503 not stored; recovers when memory is back', async () => {
    const { s } = await nodeOn();
    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');
      const r = await s.broadcast({ stream: 'oom', data: '"x"' });
      expect(r.status).toBe(503);
      expect(await r.text()).toMatch(/not stored.*OOM/);
      await timeUntil(async () => (await health(s.httpUrl)).status === 503, 2000);
      expect((await health(s.httpUrl)).body).toMatchObject({ status: 'degraded', reason: expect.stringMatching(/refuses writes: OOM/) });
      await admin.config('SET', 'maxmemory', '0');
      await timeUntil(async () => (await health(s.httpUrl)).status === 200, 2000);
      expect((await s.broadcast({ stream: 'oom', data: '"y"' })).status).toBe(201);
    } finally {
      await admin.config('SET', 'maxmemory', '0').catch(() => {});
      admin.disconnect();
    }
  });
});
