import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '../../common/redis-testing.ts';

/** The Redis cost script end to end on a real redis-server: its figures add up, bad input is refused. */
let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.close();
});

const run = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile('node', ['--import', 'tsx', 'services/replay-server/broker/redis-cost.ts', ...args], { env: { ...process.env, REDIS_URL: redis.url, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );

describe('redis-cost (what Redis costs per message and per delivery)', () => {
  it('publishes through the broker, every node reads every message, and leaves no key behind', async () => {
    const r = await run(['--messages', '600', '--streams', '50', '--nodes', '2', '--batch', '3', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { complete: boolean; received: number[]; publishScript: { calls: number; usecPerCall: number }; feedReads: { calls: number }; redisCpuUsecPerMessage: number; redisCpuUsecPerDelivery: number };
    expect(out.complete).toBe(true);
    expect(out.received).toEqual([600, 600]);
    // One script per batch of 3 (sessions and history are not part of this path).
    expect(out.publishScript.calls).toBe(200);
    expect(out.publishScript.usecPerCall).toBeGreaterThan(0);
    expect(out.feedReads.calls).toBeGreaterThan(0);
    expect(out.redisCpuUsecPerDelivery).toBeCloseTo(out.redisCpuUsecPerMessage / 10, 1);
    const { Redis } = await import('ioredis');
    const c = new Redis(redis.url);
    try {
      expect(await c.keys('rrcost:*')).toEqual([]);
    } finally {
      c.disconnect();
    }
  });

  it('bad input exits 2, an unreachable Redis 1, each with a coded error', async () => {
    expect(await run(['--nodes', '0'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/RR_ERR_OPTION_INVALID/) });
    expect(await run([], { REDIS_URL: 'redis://127.0.0.1:1' })).toMatchObject({ code: 1, stderr: expect.stringMatching(/RR_ERR_REDIS_UNAVAILABLE: cannot reach Redis/) });
  });
});
