import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '../common/redis-testing.ts';
import { RedisBroker, type RedisBrokerOptions } from './broker/redis.ts';
import { useTestServers } from './test-fixture.ts';
import { pubsubId } from './testing.ts';

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

  it('a history read Redis cannot answer is rejected as broker_unavailable (not a verdict on the stream), and served once Redis is back', async () => {
    const { s } = await nodeOn();
    for (const n of [1, 2, 3]) expect((await s.broadcast({ stream: 'rh', data: String(n) })).status).toBe(201);
    const id = pubsubId('rh');
    const { c } = await t.open(s.wsUrl);
    c.send({ command: 'subscribe', identifier: id });
    expect(await c.take(1)).toEqual([{ type: 'confirm_subscription', identifier: id }]);
    c.send({ command: 'history', identifier: id, history: { since: 1 } });
    const backlog = await c.take(4);
    const epoch = backlog[0]!.epoch as string;
    const asked = { command: 'history', identifier: id, history: { streams: { rh: { epoch, offset: 1 } } } };
    redis.signal('SIGSTOP');
    try {
      c.send(asked);
      expect(await c.take(1)).toEqual([{ type: 'reject_history', identifier: id, reason: 'broker_unavailable' }]);
    } finally {
      redis.signal('SIGCONT');
    }
    await timeUntil(async () => (await health(s.httpUrl)).status === 200, 3000);
    // Offsets 2 and 3 were delivered already: the same request now confirms with nothing to add.
    c.send(asked);
    expect(await c.take(1)).toEqual([{ type: 'confirm_history', identifier: id }]);
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

describe('idempotent publishes', () => {
  const post = (url: string, body: unknown, key?: string) => fetch(`${url}/_broadcast`, { method: 'POST', headers: key ? { 'idempotency-key': key } : {}, body: JSON.stringify(body) });

  it('Redis: a retry across a stall (503 "may have been stored") is answered 201 and stored once, delivered once', async () => {
    const { s, broker } = await nodeOn();
    const c = await t.open(s.wsUrl);
    c.c.send({ command: 'subscribe', identifier: JSON.stringify({ channel: '$pubsub', stream_name: 'idem' }) });
    await c.c.take(1);
    redis.signal('SIGSTOP');
    let first: Response;
    try {
      first = await post(s.httpUrl, { stream: 'idem', data: '"once"' }, 'k-1');
    } finally {
      redis.signal('SIGCONT');
    }
    expect(first.status).toBe(503);
    expect(await first.text()).toMatch(/may have been stored/);
    // The stalled script runs once Redis wakes: the retry finds its key and stores nothing more.
    await timeUntil(async () => (await health(s.httpUrl)).status === 200, 3000);
    const retry = await post(s.httpUrl, { stream: 'idem', data: '"once"' }, 'k-1');
    expect(retry.status).toBe(201);
    expect(await retry.json()).toEqual({ accepted: 1 });
    expect((await post(s.httpUrl, [{ stream: 'idem', data: '"once"', idempotencyKey: 'k-1' }, { stream: 'idem', data: '"two"', idempotencyKey: 'k-2' }])).status).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.c.frames.filter((f) => f.identifier !== undefined && f.message !== undefined).map((f) => [f.message, f.offset])).toEqual([
      ['once', 1],
      ['two', 2],
    ]);
    const h = await broker.history('idem', { since: 0 });
    expect(h.ok && h.messages.map((m) => m.message)).toEqual(['"once"', '"two"']);
    expect((await broker.stats()).duplicatesSuppressed).toBe(2);
  });

  it('memory broker: same key within the window is stored once; other keys and other streams are independent; bad keys are 422', async () => {
    const s = await t.start({});
    for (let i = 0; i < 3; i++) expect((await post(s.httpUrl, { stream: 'm', data: '"a"' }, 'same')).status).toBe(201);
    expect((await post(s.httpUrl, { stream: 'm2', data: '"a"' }, 'same')).status).toBe(201);
    expect((await post(s.httpUrl, { stream: 'm', data: '"b"' })).status).toBe(201);
    const h = await s.srv.broker.history('m', { since: 0 });
    expect(h.ok && h.messages.map((m) => [m.message, m.offset])).toEqual([
      ['"a"', 1],
      ['"b"', 2],
    ]);
    expect((await s.srv.broker.stats()).duplicatesSuppressed).toBe(2);
    expect((await post(s.httpUrl, [{ stream: 'm', data: '"a"' }, { stream: 'm', data: '"b"' }], 'one-for-two')).status).toBe(422);
    expect((await post(s.httpUrl, { stream: 'm', data: '"a"', idempotencyKey: 7 })).status).toBe(422);
  });
});

describe("Rebound's publisher on a stalled Redis", () => {
  it('a publish caught by a 1.2 s stall is retried with its key: every seq stored once and delivered once', async () => {
    const { s, broker } = await nodeOn();
    const c = await t.open(s.wsUrl);
    c.c.send({ command: 'subscribe', identifier: JSON.stringify({ channel: '$pubsub', stream_name: 'pub' }) });
    await c.c.take(1);
    const { startPublisher } = await import('../../engine/measure/publisher.ts');
    const pub = startPublisher({ url: s.httpUrl, stream: 'pub', runId: 'r1', messages: 30, intervalMs: 50 });
    await new Promise((r) => setTimeout(r, 300));
    redis.signal('SIGSTOP');
    await new Promise((r) => setTimeout(r, 1200));
    redis.signal('SIGCONT');
    const res = await pub.done;
    expect(res.retried).toBeGreaterThan(0);
    expect(res.failed).toBe(0);
    expect(res.published).toBe(30);
    const h = await broker.history('pub', { since: 0 });
    const seqs = h.ok ? h.messages.map((m) => (JSON.parse(m.message) as { seq: number }).seq) : [];
    expect(new Set(seqs).size).toBe(seqs.length);
    expect([...seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    await new Promise((r) => setTimeout(r, 300));
    const got = c.c.frames.filter((f) => f.identifier !== undefined && f.message !== undefined).map((f) => (f.message as { seq: number }).seq);
    expect(got.length).toBe(30);
    expect(new Set(got).size).toBe(30);
  });
});
