import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '../../common/redis-testing.ts';
import { Redis } from 'ioredis';
import { RedisBroker } from './redis.ts';
import type { BrokerOptions, StreamMessage } from './types.ts';

/** The Redis broker against a real redis-server of its own (no mocks): the memory broker's semantics across nodes. */

let redis: TestRedis;
let n = 0;
const brokers: RedisBroker[] = [];
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  for (const b of brokers.splice(0)) await b.close();
});

const base: BrokerOptions = { historyLimit: 100, historyTtlSec: 300, sessionTtlSec: 300 };
/** Each test its own key prefix: one Redis, no state shared between tests. */
async function node(opts: Partial<BrokerOptions> = {}, prefix = `t${++n}:`): Promise<RedisBroker> {
  const b = new RedisBroker({ ...base, ...opts, url: redis.url, prefix });
  await b.connect();
  brokers.push(b);
  return b;
}
const collect = (b: RedisBroker) => {
  const got: StreamMessage[] = [];
  b.onMessages((m) => got.push(...m));
  return got;
};
const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('RedisBroker', () => {
  it('publishes on one node, delivers on every node, in offset order, with one epoch', async () => {
    const a = await node();
    const b = await node({}, `t${n}:`);
    const gotA = collect(a);
    const gotB = collect(b);
    await a.publish([{ stream: 's', message: '"1"' }, { stream: 's', message: '"2"' }]);
    await b.publish([{ stream: 's', message: '"3"' }, { stream: 'w', message: '"whisper"', transient: true, exclude: 'sid1' }]);
    await until(() => gotA.length === 4 && gotB.length === 4);
    for (const got of [gotA, gotB]) {
      expect(got.filter((m) => m.stream === 's').map((m) => [m.offset, m.message])).toEqual([[1, '"1"'], [2, '"2"'], [3, '"3"']]);
      expect(got.find((m) => m.stream === 'w')).toEqual({ stream: 'w', message: '"whisper"', exclude: 'sid1' });
    }
    expect(new Set(gotA.filter((m) => m.stream === 's').map((m) => m.epoch)).size).toBe(1);
    const h = await b.history('s', { epoch: gotA[0]!.epoch!, offset: 1 });
    expect(h).toMatchObject({ ok: true, messages: [{ offset: 2 }, { offset: 3 }] });
    expect(await a.history('w', { epoch: 'x', offset: 0 })).toEqual({ ok: false, reason: 'stream_not_found' });
  });

  it('two nodes issuing offsets concurrently never collide', async () => {
    const a = await node();
    const b = await node({ historyLimit: 10_000 }, `t${n}:`);
    const got = collect(a);
    const pubs: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) pubs.push((i % 2 ? a : b).publish([{ stream: 'c', message: String(i) }, { stream: 'c', message: String(i) }]));
    await Promise.all(pubs);
    await until(() => got.length === 400);
    expect(got.map((m) => m.offset)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    // Every publish's pair is adjacent: a batch is atomic, never interleaved with another node's.
    for (let i = 0; i < 400; i += 2) expect(got[i]!.message).toBe(got[i + 1]!.message);
  });

  it('honours the history limit, the reasons and paging like the memory broker', async () => {
    const a = await node({ historyLimit: 5 });
    await a.publish(Array.from({ length: 8 }, (_, i) => ({ stream: 'h', message: `"${'x'.repeat(10)}${i + 1}"` })));
    const all = await a.history('h', { since: 1 });
    if (!all.ok) throw new Error('expected ok');
    expect(all.messages.map((m) => m.offset)).toEqual([4, 5, 6, 7, 8]);
    const epoch = all.messages[0]!.epoch!;
    expect(await a.history('h', { epoch, offset: 2 })).toEqual({ ok: false, reason: 'offset_evicted' });
    expect(await a.history('h', { epoch, offset: 3 })).toMatchObject({ ok: true, messages: [{ offset: 4 }, { offset: 5 }, { offset: 6 }, { offset: 7 }, { offset: 8 }] });
    expect(await a.history('h', { epoch, offset: 8 })).toEqual({ ok: true, messages: [] });
    expect(await a.history('h', { epoch, offset: 9 })).toEqual({ ok: false, reason: 'offset_ahead' });
    expect(await a.history('h', { epoch: 'nope', offset: 3 })).toEqual({ ok: false, reason: 'unknown_epoch' });
    const page = await a.history('h', { epoch, offset: 3 }, { maxBytes: 30 });
    expect(page).toMatchObject({ ok: true, more: true, messages: [{ offset: 4 }, { offset: 5 }] });
    expect(await a.history('h', { epoch, offset: 7 }, { maxBytes: 1 })).toMatchObject({ ok: true, messages: [{ offset: 8 }] });
    // /metrics' historyMessages: entries held over every stream (here 5 + 2), -1 past the stream cap.
    await a.publish([{ stream: 'h2', message: '1' }, { stream: 'h2', message: '2' }]);
    expect((await a.stats()).historyMessages).toBe(7);
    expect((await a.stats(1)).historyMessages).toBe(-1);
  });

  it('honours the history TTL (Redis clock): expired entries are evicted, the offset counter is not', async () => {
    const a = await node({ historyTtlSec: 1 });
    await a.publish([{ stream: 't', message: '1' }]);
    const first = await a.history('t', { since: 1 });
    if (!first.ok) throw new Error('expected ok');
    const epoch = first.messages[0]!.epoch!;
    expect(first.messages).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 2200));
    expect(await a.history('t', { epoch, offset: 0 })).toEqual({ ok: false, reason: 'offset_evicted' });
    expect(await a.history('t', { since: 1 })).toEqual({ ok: true, messages: [] });
    await a.publish([{ stream: 't', message: '2' }]);
    expect(await a.history('t', { epoch, offset: 1 })).toMatchObject({ ok: true, messages: [{ offset: 2, epoch }] });
  });

  it('keeps the epoch in Redis: a new broker (a restarted node) continues the same epoch and offsets', async () => {
    const prefix = `t${++n}:`;
    const a = await node({}, prefix);
    await a.publish([{ stream: 'e', message: '1' }]);
    await a.close();
    brokers.splice(brokers.indexOf(a), 1);
    const b = await node({}, prefix);
    await b.publish([{ stream: 'e', message: '2' }]);
    const h = await b.history('e', { since: 1 });
    if (!h.ok) throw new Error('expected ok');
    expect(h.messages.map((m) => m.offset)).toEqual([1, 2]);
    expect(h.messages[0]!.epoch).toBe(h.messages[1]!.epoch);
  });

  it('sessions: commit, incremental updates, restore on another node, TTL 0 disables, caps evict the oldest', async () => {
    const a = await node({ maxSessions: 2 });
    const b = await node({ maxSessions: 2 }, `t${n}:`);
    await a.commitSession('s1', JSON.stringify({ v: 1, ids: ['A', 'B'] }));
    await a.updateSession('s1', { add: ['C'], remove: ['A'] });
    expect(await b.restoreSession('s1')).toBe(JSON.stringify({ v: 1, ids: ['B', 'C'] }));
    await a.updateSession('s1', { remove: ['B', 'C'] });
    expect(await b.restoreSession('s1')).toBe(JSON.stringify({ v: 1, ids: [] }));
    // A touch does not revive an absent session.
    await a.updateSession('ghost', {});
    expect(await b.restoreSession('ghost')).toBeUndefined();
    await a.updateSession('s2', { add: ['X'] });
    await a.updateSession('s3', { add: ['Y'] });
    expect(await b.restoreSession('s1')).toBeUndefined();
    expect(await b.restoreSession('s3')).toBe(JSON.stringify({ v: 1, ids: ['Y'] }));
    expect(await a.stats()).toMatchObject({ kind: 'redis', sessions: 2, sessionsEvicted: 1 });
    const off = await node({ sessionTtlSec: 0 });
    await off.commitSession('z', JSON.stringify({ v: 1, ids: ['A'] }));
    expect(await off.restoreSession('z')).toBeUndefined();
  });

  it('session changes made while Redis is down are stored, in order, once it is back', async () => {
    const own = await startTestRedis({ persist: true });
    try {
      const mk = async () => {
        const b = new RedisBroker({ ...base, url: own.url });
        await b.connect();
        return b;
      };
      const a = await mk();
      await a.commitSession('s', JSON.stringify({ v: 1, ids: ['A'] }));
      await own.stop();
      await a.updateSession('s', { add: ['B'] });
      await a.updateSession('s', { remove: ['A'] });
      await a.updateSession('t', { add: ['X'] });
      expect(a.deferredSessions()).toEqual({ waiting: 2, dropped: 0 });
      await own.start();
      const other = await mk();
      try {
        await until(() => a.deferredSessions().waiting === 0, 10_000);
        // Another node restores what the client did during the outage, not the stale set.
        expect(await other.restoreSession('s')).toBe(JSON.stringify({ v: 1, ids: ['B'] }));
        expect(await other.restoreSession('t')).toBe(JSON.stringify({ v: 1, ids: ['X'] }));
        // Back to direct writes once drained.
        await a.updateSession('s', { add: ['C'] });
        expect(await other.restoreSession('s')).toBe(JSON.stringify({ v: 1, ids: ['B', 'C'] }));
      } finally {
        await a.close();
        await other.close();
      }
    } finally {
      await own.close();
    }
  });

  it('a publish cut mid-command says it may have been stored; one never sent says nothing of the kind', async () => {
    const own = await startTestRedis();
    const a = new RedisBroker({ ...base, url: own.url });
    await a.connect();
    const blocker = new Redis(own.url);
    try {
      // Redis busy in a 2 s script: the publish is written to the socket and waits; then Redis dies.
      void blocker.eval("local t = tonumber(redis.call('TIME')[1]) while tonumber(redis.call('TIME')[1]) < t + 2 do end return 1", 0).catch(() => {});
      await new Promise((r) => setTimeout(r, 200));
      const cut = a.publish([{ stream: 'c', message: '1' }]).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 200));
      await own.stop();
      expect(await cut).toMatchObject({ maybeStored: true, message: expect.stringMatching(/may have been stored/) });
      const unsent = await a.publish([{ stream: 'c', message: '2' }]).catch((e: unknown) => e);
      expect(unsent).toBeInstanceOf(Error);
      expect((unsent as { maybeStored?: boolean }).maybeStored).toBeUndefined();
    } finally {
      blocker.disconnect();
      await a.close();
      await own.close();
    }
  });

  it('fails fast when Redis is unreachable at start, with a coded error', async () => {
    const b = new RedisBroker({ ...base, url: 'redis://127.0.0.1:1', connectTimeoutMs: 500 });
    await expect(b.connect()).rejects.toMatchObject({ code: 'RR_ERR_REDIS_UNAVAILABLE' });
  });
});
