import { describe, expect, it } from 'vitest';
import { IpcBroker, servePrimary, type IpcChannel, type PrimaryToWorker, type WorkerToPrimary } from './ipc.ts';
import { MemoryBroker } from './memory.ts';
import type { StreamMessage } from './types.ts';
import { encodeSession } from '../session/index.ts';

const state = encodeSession(['{"channel":"$pubsub","stream_name":"a"}']);

const opts = { historyLimit: 3, historyTtlSec: 10, sessionTtlSec: 5 };
const item = (stream: string, n: number) => ({ stream, message: String(n) });

describe('MemoryBroker', () => {
  it('offsets from 1 per stream, limit, history from/since, stats', async () => {
    let now = 1_000_000;
    const b = new MemoryBroker({ ...opts, now: () => now, epoch: 'e' });
    const seen: StreamMessage[] = [];
    b.onMessages((m) => seen.push(...m));
    await b.publish([item('a', 1), item('b', 1), item('a', 2)]);
    now += 2000;
    await b.publish([item('a', 3), item('a', 4)]);
    expect(seen.map((m) => `${m.stream}:${m.offset}`)).toEqual(['a:1', 'b:1', 'a:2', 'a:3', 'a:4']);
    const epoch = seen[0]!.epoch!;
    expect(epoch).toMatch(/^e-/);
    expect(await b.history('a', { epoch, offset: 1 })).toMatchObject({ ok: true, messages: [{ offset: 2 }, { offset: 3 }, { offset: 4 }] });
    expect(await b.history('a', { epoch, offset: 0 })).toEqual({ ok: false, reason: 'offset_evicted' });
    expect(await b.history('a', { epoch, offset: 5 })).toEqual({ ok: false, reason: 'offset_ahead' });
    expect(await b.history('a', { epoch: 'zz', offset: 2 })).toEqual({ ok: false, reason: 'unknown_epoch' });
    expect(await b.history('nope', { epoch, offset: 2 })).toEqual({ ok: false, reason: 'stream_not_found' });
    expect(await b.history('nope', { since: 1 })).toEqual({ ok: true, messages: [] });
    const since = await b.history('a', { since: Math.floor(now / 1000) });
    expect(since.ok && since.messages.map((m) => m.offset)).toEqual([3, 4]);
    expect(await b.stats()).toMatchObject({ historyStreams: 2, historyMessages: 4, published: 5 });
    await b.close();
  });

  it('TTL sweep empties history (position then unservable) and a long-silent stream returns with a new epoch', async () => {
    let now = 0;
    const b = new MemoryBroker({ ...opts, now: () => now, sweepIntervalMs: 1e9 });
    const first = b.publishSync([item('s', 1), item('s', 2)]);
    now += 11_000;
    b.sweep();
    expect(b.historySync('s', { epoch: first[0]!.epoch!, offset: 1 })).toEqual({ ok: false, reason: 'offset_evicted' });
    expect(b.historySync('s', { epoch: first[0]!.epoch!, offset: 2 })).toEqual({ ok: true, messages: [] });
    now += 100 * 1000;
    b.sweep();
    const again = b.publishSync([item('s', 3)]);
    expect(again[0]!.offset).toBe(1);
    expect(again[0]!.epoch).not.toBe(first[0]!.epoch);
    expect(b.historySync('s', { epoch: first[0]!.epoch!, offset: 2 })).toEqual({ ok: false, reason: 'unknown_epoch' });
    await b.close();
  });

  it('transient messages are fanned out without offsets and not stored', () => {
    const b = new MemoryBroker(opts);
    const [m] = b.publishSync([{ stream: 'w', message: '{}', transient: true, exclude: 'sid1' }]);
    expect(m).toEqual({ stream: 'w', message: '{}', exclude: 'sid1' });
    expect(b.statsSync().historyStreams).toBe(0);
    void b.close();
  });

  it('sessions: commit, restore (not consumed), expiry; ttl 0 disables', async () => {
    let now = 0;
    const b = new MemoryBroker({ ...opts, now: () => now });
    await b.commitSession('s1', state);
    expect(await b.restoreSession('s1')).toBe(state);
    expect(await b.restoreSession('s1')).toBe(state);
    now += 5001;
    expect(await b.restoreSession('s1')).toBeUndefined();
    const off = new MemoryBroker({ ...opts, sessionTtlSec: 0 });
    await off.commitSession('s', state);
    expect(await off.restoreSession('s')).toBeUndefined();
    await b.close();
    await off.close();
  });
});

/** An in-memory pipe pair with asynchronous, ordered delivery (like process IPC). */
function pipePair() {
  const toPrimary = new Set<(m: WorkerToPrimary) => void>();
  const toWorker = new Set<(m: PrimaryToWorker) => void>();
  const later = (fn: () => void) => setImmediate(fn);
  const worker: IpcChannel<WorkerToPrimary, PrimaryToWorker> = {
    send: (m) => later(() => toPrimary.forEach((f) => f(structuredClone(m)))),
    onMessage: (fn) => (toWorker.add(fn), () => toWorker.delete(fn)),
  };
  const primary: IpcChannel<PrimaryToWorker, WorkerToPrimary> = {
    send: (m) => later(() => toWorker.forEach((f) => f(structuredClone(m)))),
    onMessage: (fn) => (toPrimary.add(fn), () => toPrimary.delete(fn)),
  };
  return { worker, primary };
}

describe('IpcBroker ↔ servePrimary', () => {
  it('publishes through the primary (one offset sequence for all workers), serves history and sessions', async () => {
    const mem = new MemoryBroker({ ...opts, historyLimit: 100 });
    const host = servePrimary(mem);
    const p1 = pipePair();
    const p2 = pipePair();
    host.attach(p1.primary);
    host.attach(p2.primary);
    const w1 = new IpcBroker(p1.worker);
    const w2 = new IpcBroker(p2.worker);
    const got1: number[] = [];
    const got2: number[] = [];
    w1.onMessages((ms) => ms.forEach((m) => got1.push(m.offset!)));
    w2.onMessages((ms) => ms.forEach((m) => got2.push(m.offset!)));
    await w1.publish([item('x', 1), item('x', 2)]);
    await w2.publish([item('x', 3)]);
    await w1.publish([item('x', 4)]);
    await new Promise((r) => setTimeout(r, 50));
    expect(got1).toEqual([1, 2, 3, 4]);
    expect(got2).toEqual([1, 2, 3, 4]);
    const h = await w2.history('x', { since: 1 });
    expect(h.ok && h.messages.map((m) => m.offset)).toEqual([1, 2, 3, 4]);
    await w1.commitSession('sid', state);
    await new Promise((r) => setTimeout(r, 10));
    expect(await w2.restoreSession('sid')).toBe(state);
    expect(await w2.restoreSession('other')).toBeUndefined();
    expect(await w1.stats()).toMatchObject({ kind: 'memory', published: 4 });
    await Promise.all([w1.close(), w2.close(), mem.close()]);
  });

  it('a request the primary never answers times out instead of hanging', async () => {
    const silent: IpcChannel<WorkerToPrimary, PrimaryToWorker> = { send: () => {}, onMessage: () => () => {} };
    const w = new IpcBroker(silent, 50);
    await expect(w.history('x', { since: 1 })).rejects.toThrow(/timed out/);
  });
});

describe('MemoryBroker paging and the session store', () => {
  it('history pages hold about maxBytes (at least one message) and say when there is more', () => {
    const b = new MemoryBroker({ ...opts, historyLimit: 100 });
    b.publishSync(Array.from({ length: 10 }, (_, i) => ({ stream: 'p', message: JSON.stringify('m'.repeat(98)) + ' '.repeat(i === 4 ? 1000 : 0) })));
    const first = b.historySync('p', { since: 1 }, { maxBytes: 250 });
    expect(first.ok && first.messages.map((m) => m.offset)).toEqual([1, 2]);
    expect(first.ok && first.more).toBe(true);
    const epoch = first.ok ? first.messages[0]!.epoch! : '';
    const big = b.historySync('p', { epoch, offset: 4 }, { maxBytes: 250 });
    expect(big.ok && big.messages.map((m) => m.offset)).toEqual([5]); // one oversized message still goes
    const last = b.historySync('p', { epoch, offset: 8 }, { maxBytes: 250 });
    expect(last).toMatchObject({ ok: true, messages: [{ offset: 9 }, { offset: 10 }] });
    expect(last.ok && last.more).toBeUndefined();
    void b.close();
  });

  it('incremental updates: add, remove, touch; a touch does not revive an evicted session', () => {
    const b = new MemoryBroker({ ...opts, maxSessions: 1 });
    b.updateSessionSync('s1', { add: ['a', 'b'] });
    b.updateSessionSync('s1', { add: ['b', 'c'], remove: ['a'] });
    expect(b.restoreSessionSync('s1')).toBe(encodeSession(['b', 'c']));
    b.updateSessionSync('s2', { add: ['x'] }); // evicts s1
    b.updateSessionSync('s1', {});
    expect(b.restoreSessionSync('s1')).toBeUndefined();
    expect(b.statsSync()).toMatchObject({ sessions: 1, sessionsEvicted: 1, sessionBytes: 64 + 2 + 1 });
    void b.close();
  });
});

describe('memory broker whole-history cap after its store order dropped stale entries', () => {
  it('still evicts the oldest held message across streams first, once a thousand count-trimmed entries were compacted away', async () => {
    // historyLimit 10 keeps 10 of each stream: the 1,045th publish on `a` leaves 1,035 stale
    // entries, past the store order's compaction point (2 x 10 stored + 1024), right before b's.
    const b = new MemoryBroker({ historyLimit: 10, historyTtlSec: 300, sessionTtlSec: 0, historyMaxBytes: 10 * 1024 * 1024, epoch: 'e' });
    for (let i = 1; i <= 1045; i++) b.publishSync([item('a', i)]);
    for (let i = 1; i <= 5; i++) b.publishSync([item('b', i)]);
    const offsets = (stream: string) => {
      const h = b.historySync(stream, { since: 0 });
      return h.ok ? h.messages.map((m) => m.offset) : h.reason;
    };
    expect(offsets('a')).toEqual(Array.from({ length: 10 }, (_, k) => 1036 + k));
    // A budget one byte under what is held: the cap must take a's oldest held message (1036), not b's.
    const st = await b.stats();
    const held = st.historyBytes! + st.streamBytes!;
    const capped = new MemoryBroker({ historyLimit: 10, historyTtlSec: 300, sessionTtlSec: 0, historyMaxBytes: held - 1, epoch: 'e' });
    for (let i = 1; i <= 1045; i++) capped.publishSync([item('a', i)]);
    for (let i = 1; i <= 5; i++) capped.publishSync([item('b', i)]);
    const cappedOffsets = (stream: string) => {
      const h = capped.historySync(stream, { since: 0 });
      return h.ok ? h.messages.map((m) => m.offset) : h.reason;
    };
    expect(cappedOffsets('b')).toEqual([1, 2, 3, 4, 5]);
    expect(cappedOffsets('a')).toEqual(Array.from({ length: 9 }, (_, k) => 1037 + k));
    // The count cap's evictions are counted too: the whole-history cap added exactly one.
    expect((await capped.stats()).historyEvictedMessages).toBe(st.historyEvictedMessages! + 1);
    await b.close();
    await capped.close();
  });
});
