import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '../common/redis-testing.ts';
import { MemoryBroker, STREAM_OVERHEAD_BYTES } from './broker/memory.ts';
import { REDIS_STREAM_OVERHEAD_BYTES, RedisBroker } from './broker/redis.ts';
import type { Broker, BrokerOptions } from './broker/types.ts';
import { useTestServers } from './test-fixture.ts';

/** Byte bounds: per message at /_broadcast (413), per stream and for the whole history, memory and Redis alike. */

let redis: TestRedis;
let seq = 0;
const closers: Broker[] = [];
const t = useTestServers();
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  for (const b of closers.splice(0)) await b.close();
});

// 2500 message bytes plus what three streams named like 's1' cost themselves (the budget counts both).
const budget = (overhead: number) => 2500 + 3 * (overhead + 2);
const opts = (overhead: number): BrokerOptions => ({ historyLimit: 100, historyTtlSec: 300, sessionTtlSec: 0, historyStreamMaxBytes: 1000, historyMaxBytes: budget(overhead) });
const kinds: [string, number, () => Promise<Broker>][] = [
  ['memory', STREAM_OVERHEAD_BYTES, async () => new MemoryBroker(opts(STREAM_OVERHEAD_BYTES))],
  [
    'redis',
    REDIS_STREAM_OVERHEAD_BYTES,
    async () => {
      const b = new RedisBroker({ ...opts(REDIS_STREAM_OVERHEAD_BYTES), url: redis.url, prefix: `bb${++seq}:` });
      await b.connect();
      return b;
    },
  ],
];
const msg = (c: string) => c.repeat(300);
const offsets = async (b: Broker, s: string) => {
  const h = await b.history(s, { since: 0 });
  return h.ok ? h.messages.map((m) => m.offset) : h.reason;
};

describe.each(kinds)('%s broker history byte caps', (_kind, overhead, make) => {
  it('per stream by bytes as well as count (newest kept), then the whole history oldest first across streams, counted', async () => {
    const b = await make();
    closers.push(b);
    for (let i = 0; i < 10; i++) await b.publish([{ stream: 's1', message: msg('a') }]);
    // 1000 bytes per stream: 3 of 300 fit.
    expect(await offsets(b, 's1')).toEqual([8, 9, 10]);
    for (let i = 0; i < 3; i++) await b.publish([{ stream: 's2', message: msg('b') }]);
    expect((await b.stats()).historyBytes).toBe(1800);
    // 2700 > 2500 (besides the streams' own bytes): the oldest stored entry anywhere (s1's offset 8) goes.
    for (let i = 0; i < 3; i++) await b.publish([{ stream: 's3', message: msg('c') }]);
    expect(await offsets(b, 's1')).toEqual([9, 10]);
    expect(await offsets(b, 's2')).toEqual([1, 2, 3]);
    expect(await offsets(b, 's3')).toEqual([1, 2, 3]);
    const st = await b.stats();
    expect(st).toMatchObject({ historyBytes: 2400, historyEvictedMessages: 8, historyEvictedBytes: 2400, historyMessages: 8, historyStreams: 3, streamBytes: 3 * (overhead + 2) });
    // A single message larger than the stream cap still stays (the HTTP size limit keeps it in bounds).
    await b.publish([{ stream: 's4', message: 'd'.repeat(1200) }]);
    expect(await offsets(b, 's4')).toEqual([1]);
    const after = await b.stats();
    expect(after.historyBytes! + after.streamBytes!).toBeLessThanOrEqual(budget(overhead));
  });

  it('a flood of big messages on many streams stays within the whole-history cap', async () => {
    const b = await make();
    closers.push(b);
    for (let i = 0; i < 60; i++) await b.publish([{ stream: `f${i}`, message: 'x'.repeat(900) }]);
    const st = await b.stats();
    expect(st.historyBytes! + st.streamBytes!).toBeLessThanOrEqual(budget(overhead));
    // Every message is either held or counted as evicted; emptied streams went whole.
    expect(st.historyEvictedMessages! + st.historyMessages).toBe(60);
    expect(st.historyMessages).toBeGreaterThanOrEqual(1);
    expect(st.historyStreams).toBeLessThanOrEqual(3);
    expect(st.streamsEvicted).toBe(60 - st.historyStreams);
    expect(await offsets(b, 'f59')).toEqual([1]);
    expect(await offsets(b, 'f0')).toEqual([]);
  });
});

describe('/_broadcast message size limit', () => {
  it('413 with the limit in the body; nothing of the batch stored; at the limit is fine', async () => {
    const s = await t.start({ maxMessageBytes: 1024 });
    const big = await s.broadcast({ stream: 'z', data: 'x'.repeat(1025) });
    expect(big.status).toBe(413);
    const body = (await big.json()) as { error: { code: string; message: string } };
    expect(JSON.stringify(body)).toMatch(/1024/);
    expect(JSON.stringify(body)).toMatch(/RR_ERR_PAYLOAD_TOO_LARGE/);
    const batch = await s.broadcast([{ stream: 'z', data: 'ok' }, { stream: 'z', data: 'x'.repeat(2000) }]);
    expect(batch.status).toBe(413);
    expect(await batch.text()).toMatch(/index 1/);
    expect((await s.srv.broker.stats()).published).toBe(0);
    expect((await s.broadcast({ stream: 'z', data: 'x'.repeat(1024) })).status).toBe(201);
    const m = (await (await fetch(`${s.httpUrl}/metrics`)).json()) as { broker: { historyBytes: number } };
    expect(m.broker.historyBytes).toBeGreaterThan(1024);
  });

  it('options that cannot hold together are refused', async () => {
    await expect(t.start({ maxMessageBytes: 2_000_000, historyStreamMaxBytes: 1_000_000 })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
  });
});
