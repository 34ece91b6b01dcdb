import { describe, expect, it } from 'vitest';
import { MemoryBroker, STREAM_OVERHEAD_BYTES } from './broker/memory.ts';
import { REDIS_STREAM_OVERHEAD_BYTES, RedisBroker } from './broker/redis.ts';
import type { Broker } from './broker/types.ts';
import { brokerOptions } from './index.ts';
import { resolveReplayOptions, type ReplayServerOptions } from './options.ts';
import { useSuiteRedis, useTestServers } from './test-fixture.ts';
import { pubsubId, type TestServer } from './testing.ts';

/**
 * The stream count and the streams' own memory are bounded (issue 35 item 4): 5,000 distinct
 * streams through /_broadcast against maxStreams 1000, on the memory and the Redis broker; a
 * resume from an evicted stream is told its history is gone; the sweep's work does not grow with
 * idle streams or sessions; the hub keeps no entry for a stream nobody listens to.
 */

let seq = 0;
const t = useTestServers();
const redis = useSuiteRedis();

interface Metrics {
  streams: number;
  subscriptions: number;
  broker: { historyStreams: number; historyMessages: number; historyBytes: number; streamBytes: number; streamsEvicted: number };
}
const metricsOf = async (s: TestServer) => (await (await fetch(`${s.httpUrl}/metrics`)).json()) as Metrics;

const kinds: [string, number, (o: Partial<ReplayServerOptions>) => Promise<TestServer>][] = [
  ['memory', STREAM_OVERHEAD_BYTES, (o) => t.start(o)],
  [
    'redis',
    REDIS_STREAM_OVERHEAD_BYTES,
    async (o) => {
      const broker = new RedisBroker({ ...brokerOptions(resolveReplayOptions(o)), url: redis.url, prefix: `sb${++seq}:`, probeIntervalMs: 0 });
      await broker.connect();
      t.closeLater(() => broker.close());
      return t.start(o, { broker });
    },
  ],
];

/** `count` distinct streams `prefix<i>`, one small message each, in /_broadcast batches of 500. */
async function flood(s: TestServer, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 500) {
    const batch = Array.from({ length: Math.min(500, count - i) }, (_, j) => ({ stream: `${prefix}${i + j}`, data: '{"n":1}' }));
    const res = await s.broadcast(batch);
    expect(res.status).toBe(201);
  }
}

describe.each(kinds)('%s broker: stream bounds', (_kind, overhead, start) => {
  it('5,000 distinct streams against maxStreams 1000: the count, the bytes and the messages stay bounded, evictions counted', async () => {
    const s = await start({ maxStreams: 1000 });
    await flood(s, 'flood/', 5000);
    const m = await metricsOf(s);
    expect(m.broker.historyStreams).toBe(1000);
    expect(m.broker.streamsEvicted).toBe(4000);
    expect(m.broker.historyMessages).toBe(1000);
    expect(m.broker.streamBytes).toBe(1000 * overhead + [...Array(1000).keys()].reduce((n, i) => n + `flood/${4000 + i}`.length, 0));
    // The newest streams stayed, the oldest went.
    const c = await t.open(s.wsUrl);
    c.c.send({ command: 'subscribe', identifier: pubsubId('flood/4999'), history: { since: 1 } });
    expect((await c.c.waitFor((f) => f.stream_id === 'flood/4999')).offset).toBe(1);
  });

  it('many tiny streams hit historyMaxBytes through their own overhead', async () => {
    // 200 streams' worth of overhead: 5,000 streams of 7-byte messages would be 35 KB of messages only.
    const budget = 200 * (overhead + 12);
    const s = await start({ historyMaxBytes: budget, historyStreamMaxBytes: 1024, maxMessageBytes: 256, maxBodyBytes: 1_048_576, maxQueuedBytes: 2_097_152 });
    await flood(s, 'tiny/', 5000);
    const m = await metricsOf(s);
    expect(m.broker.historyBytes + m.broker.streamBytes).toBeLessThanOrEqual(budget);
    expect(m.broker.historyStreams).toBeLessThanOrEqual(200);
    expect(m.broker.streamsEvicted).toBe(5000 - m.broker.historyStreams);
  });

  it('a resume from an evicted stream gets reject_history, never the new epoch\'s messages as if they followed', async () => {
    const s = await start({ maxStreams: 10 });
    for (let i = 1; i <= 3; i++) expect((await s.broadcast({ stream: 'kept/a', data: JSON.stringify({ n: i }) })).status).toBe(201);
    const a = await t.open(s.wsUrl);
    const id = pubsubId('kept/a');
    a.c.send({ command: 'subscribe', identifier: id, history: { since: 1 } });
    const first = await a.c.waitFor((f) => f.offset === 3);
    const epoch = first.epoch as string;
    // Ten newer streams push kept/a out; then it is published again (a new epoch from offset 1).
    await flood(s, 'other/', 10);
    for (let i = 4; i <= 6; i++) expect((await s.broadcast({ stream: 'kept/a', data: JSON.stringify({ n: i }) })).status).toBe(201);
    const b = await t.open(s.wsUrl);
    b.c.send({ command: 'subscribe', identifier: id });
    await b.c.take(1);
    b.c.send({ command: 'history', identifier: id, history: { streams: { 'kept/a': { epoch, offset: 2 } } } });
    const [answer] = await b.c.take(1);
    expect(answer).toMatchObject({ type: 'reject_history', identifier: id });
    // The stream itself lives on under a new epoch, offsets from 1.
    b.c.send({ command: 'history', identifier: id, history: { since: 1 } });
    const again = await b.c.take(4);
    expect(again.slice(0, 3).map((f) => f.offset)).toEqual([1, 2, 3]);
    expect(again[0]!.epoch).not.toBe(epoch);
    expect(again[3]).toEqual({ type: 'confirm_history', identifier: id });
  });
});

describe('memory broker sweep', () => {
  const make = (now: () => number): Broker & MemoryBroker => new MemoryBroker({ historyLimit: 10, historyTtlSec: 10, sessionTtlSec: 10, sweepIntervalMs: 1e9, now });

  it('visits what expires, not every idle stream or session; expiry still happens on time', async () => {
    let now = 1_000_000;
    const b = make(() => now);
    try {
      const [first] = b.publishSync([{ stream: 'idle/0', message: '{}' }]);
      for (let i = 1; i < 20_000; i++) b.publishSync([{ stream: `idle/${i}`, message: '{}' }]);
      for (let i = 0; i < 5_000; i++) b.updateSessionSync(`sid${i}`, { add: ['x'] });
      now += 5_000;
      b.sweep();
      // Nothing expired: one look per order (quiet streams, live streams, sessions).
      expect(b.sweepVisits).toBeLessThanOrEqual(3);
      b.publishSync([{ stream: 'busy', message: '{}' }]);
      now += 6_000; // the 20,000 idle streams' history and the sessions expired; busy's is 6 s old
      b.sweep();
      // The 20,000 expired streams and 5,000 sessions, plus at most one stop per order.
      expect(b.sweepVisits).toBeGreaterThanOrEqual(25_000);
      expect(b.sweepVisits).toBeLessThanOrEqual(25_003);
      expect((await b.stats()).historyMessages).toBe(1);
      expect((await b.stats()).sessions).toBe(0);
      // Emptied streams keep their offsets for 10 x TTL: a caught-up client still resumes.
      expect(await b.history('idle/0', { epoch: first!.epoch!, offset: 1 })).toEqual({ ok: true, messages: [] });
      now += 1_000;
      b.sweep();
      expect(b.sweepVisits).toBeLessThanOrEqual(3);
      now += 100_000; // 10 x TTL of silence: the idle streams go
      b.sweep();
      expect((await b.stats()).historyStreams).toBe(0);
      b.sweep();
      expect(b.sweepVisits).toBeLessThanOrEqual(3);
    } finally {
      await b.close();
    }
  });

  it('an active stream\'s expired head is not served (the sweep no longer walks it)', async () => {
    let now = 1_000_000;
    const b = make(() => now);
    try {
      const [m1] = b.publishSync([{ stream: 's', message: '1' }]);
      now += 8_000;
      b.publishSync([{ stream: 's', message: '2' }]);
      now += 4_000; // message 1 expired, message 2 not
      b.sweep();
      expect(await b.history('s', { epoch: m1!.epoch!, offset: 0 })).toEqual({ ok: false, reason: 'offset_evicted' });
      const tail = await b.history('s', { epoch: m1!.epoch!, offset: 1 });
      expect(tail.ok && tail.messages.map((m) => m.message)).toEqual(['2']);
      expect((await b.stats()).historyMessages).toBe(1);
    } finally {
      await b.close();
    }
  });
});

describe('hub', () => {
  it('keeps no stream entry nobody listens to: unsubscribe, rejected subscribes and closes leave none', async () => {
    const s = await t.start({ maxSubscriptions: 30 });
    const a = await t.open(s.wsUrl);
    for (let i = 0; i < 40; i++) a.c.send({ command: 'subscribe', identifier: pubsubId(`h/${i}`) });
    const answers = await a.c.take(40);
    expect(answers.filter((f) => f.type === 'reject_subscription')).toHaveLength(10);
    // Unsubscribe has no answer: wait on /metrics.
    for (let i = 0; i < 20; i++) a.c.send({ command: 'unsubscribe', identifier: pubsubId(`h/${i}`) });
    for (let i = 0; i < 50 && (await metricsOf(s)).subscriptions > 10; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await metricsOf(s)).toMatchObject({ streams: 10, subscriptions: 10 });
    a.c.close();
    await a.c.waitClosed();
    for (let i = 0; i < 50 && (await metricsOf(s)).streams > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await metricsOf(s)).toMatchObject({ streams: 0, subscriptions: 0 });
  });
});
