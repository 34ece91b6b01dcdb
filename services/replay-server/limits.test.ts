import { describe, expect, it } from 'vitest';
import { MemoryBroker } from './broker/memory.ts';
import type { Broker } from './broker/types.ts';
import { pubsubId, RawClient, sleepMs, type Frame, type TestServer } from './testing.ts';
import { useTestServers } from './test-fixture.ts';

/**
 * Memory bounds and per-connection budgets (issue 8, items 7, 8, 10, 11), at lowered limits.
 */

const { clients, start, open } = useTestServers();
const metrics = async (t: TestServer) => (await (await fetch(`${t.httpUrl}/metrics`)).json()) as Record<string, unknown> & { broker: Record<string, number> };

describe('session bounds (item 8)', () => {
  it('identifiers over maxIdentifierBytes (default 4096) are rejected, however small the frame limit allows', async () => {
    const t = await start();
    const { c } = await open(t.wsUrl);
    // A short stream name in a long identifier (extra keys are allowed), within maxPayloadBytes.
    const long = JSON.stringify({ channel: '$pubsub', stream_name: 's/1', pad: 'x'.repeat(5000) });
    c.send({ command: 'subscribe', identifier: long });
    expect(await c.take(1)).toEqual([{ type: 'reject_subscription', identifier: long }]);
    expect(t.srv.counters.sessionLimitRejects).toBe(1);
  });

  it('a session holds at most maxSessionBytes of identifiers, so a restore welcome stays small', async () => {
    const t = await start({ maxSessionBytes: 2048, maxIdentifierBytes: 1024 });
    const a = await open(t.wsUrl);
    const ids = Array.from({ length: 8 }, (_, i) => pubsubId(`fat/${i}/${'y'.repeat(400)}`));
    for (const id of ids) a.c.send({ command: 'subscribe', identifier: id });
    const answers = await a.c.take(8);
    const confirmed = answers.filter((f) => f.type === 'confirm_subscription').length;
    expect(confirmed).toBe(4); // 4 x ~450 bytes fit in 2048, the 5th does not
    expect(answers.slice(confirmed).every((f) => f.type === 'reject_subscription')).toBe(true);
    a.c.close();
    await sleepMs(50);
    const b = new RawClient(`${t.wsUrl}?sid=${a.welcome.sid}`);
    clients.push(b);
    await b.opened;
    await b.take(1);
    expect(b.raw[0]!.length).toBeLessThan(2048 + 200);
    expect((JSON.parse(b.raw[0]!) as Frame).restored_ids).toHaveLength(4);
  });

  it('?pi= cannot switch the liveness check off: pings keep coming at maxPingIntervalSec', async () => {
    const t = await start({ pingIntervalSec: 1, maxPingIntervalSec: 1 });
    const c = new RawClient(`${t.wsUrl}?pi=3600`);
    clients.push(c);
    await c.opened;
    await c.waitFor((f) => f.type === 'ping', 2500, 'a ping within maxPingIntervalSec');
  });
});

describe('session store cap (item 10)', () => {
  it('count cap: oldest sessions are evicted first and /metrics shows the store', async () => {
    const t = await start({ maxSessions: 3 });
    const sids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const x = await open(t.wsUrl);
      x.c.send({ command: 'subscribe', identifier: pubsubId(`cap/${i}`) });
      await x.c.take(1);
      x.c.close();
      sids.push(x.welcome.sid as string);
      await sleepMs(20);
    }
    const m = await metrics(t);
    expect(m.broker.sessions).toBe(3);
    expect(m.broker.sessionsEvicted).toBe(3);
    expect(m.broker.sessionBytes).toBeGreaterThan(0);
    const oldest = await open(`${t.wsUrl}?sid=${sids[0]}`);
    expect(oldest.welcome.restored).toBeUndefined();
    const newest = await open(`${t.wsUrl}?sid=${sids[5]}`);
    expect(newest.welcome.restored).toBe(true);
  });

  it('bytes cap: the store stays under maxSessionStoreBytes', () => {
    const b = new MemoryBroker({ historyLimit: 1, historyTtlSec: 60, sessionTtlSec: 300, maxSessionStoreBytes: 100_000 });
    for (let i = 0; i < 50; i++) b.updateSessionSync(`sid${i}`, { add: [pubsubId(`b/${i}/${'z'.repeat(10_000)}`)] });
    const s = b.statsSync();
    expect(s.sessionBytes).toBeLessThanOrEqual(100_000);
    expect(s.sessions).toBeLessThan(10);
    expect(s.sessionsEvicted).toBe(50 - s.sessions);
    expect(b.restoreSessionSync('sid49')).toBeDefined();
    expect(b.restoreSessionSync('sid0')).toBeUndefined();
    void b.close();
  });
});

describe('whispers (item 11)', () => {
  const whisperPair = async (t: TestServer, stream: string) => {
    const id = pubsubId(stream);
    const a = await open(t.wsUrl);
    const b = await open(t.wsUrl);
    for (const x of [a, b]) {
      x.c.send({ command: 'subscribe', identifier: id });
      await x.c.take(1);
    }
    return { id, a, b };
  };

  it('a per-connection rate limit drops (and counts) the excess; /metrics shows whisper counters', async () => {
    const t = await start({ whisperRatePerSec: 5 });
    const { id, a, b } = await whisperPair(t, 'w/rate');
    for (let i = 0; i < 50; i++) a.c.send({ command: 'whisper', identifier: id, data: { i } });
    a.c.send({ command: 'ping' });
    await a.c.waitFor((f) => f.type === 'pong');
    await sleepMs(100);
    const got = b.c.drain().filter((f) => f.identifier === id);
    expect(got.length).toBe(5);
    const m = await metrics(t);
    expect(m).toMatchObject({ whispers: 5, whispersDropped: 45 });
    expect(m.whisperBytes).toBeGreaterThan(0);
  });

  it('a per-connection byte limit drops large whispers', async () => {
    const t = await start({ whisperBytesPerSec: 4096 });
    const { id, a, b } = await whisperPair(t, 'w/bytes');
    for (let i = 0; i < 4; i++) a.c.send({ command: 'whisper', identifier: id, data: { pad: 'w'.repeat(1500) } });
    a.c.send({ command: 'ping' });
    await a.c.waitFor((f) => f.type === 'pong');
    await sleepMs(100);
    expect(b.c.drain().filter((f) => f.identifier === id)).toHaveLength(2);
    expect(t.srv.counters.whispersDropped).toBe(2);
  });

  it('whispers on public streams stay on by default (even with a broadcast key) and can be switched off', async () => {
    const on = await start({ broadcastKey: 'secret' });
    const p = await whisperPair(on, 'w/on');
    p.a.c.send({ command: 'whisper', identifier: p.id, data: { typing: true } });
    expect(await p.b.c.take(1)).toEqual([{ identifier: p.id, message: { typing: true } }]);

    const off = await start({ publicWhispers: false });
    const q = await whisperPair(off, 'w/off');
    q.a.c.send({ command: 'whisper', identifier: q.id, data: { typing: true } });
    q.a.c.send({ command: 'ping' });
    await q.a.c.waitFor((f) => f.type === 'pong');
    await sleepMs(100);
    expect(q.b.c.drain()).toEqual([]);
    expect(off.srv.counters.whispersRefused).toBe(1);
  });
});

describe('early frames during a ?sid= restore (item 7)', () => {
  it('a client that sends 200 frames while its restore is looked up is paused, not refused', async () => {
    const inner = new MemoryBroker({ historyLimit: 10, historyTtlSec: 60, sessionTtlSec: 60 });
    const slowRestore: Broker = {
      kind: 'slow-restore',
      publish: (items) => inner.publish(items),
      onMessages: (l) => inner.onMessages(l),
      history: (s, p, page) => inner.history(s, p, page),
      commitSession: (sid, s) => inner.commitSession(sid, s),
      updateSession: (sid, c) => inner.updateSession(sid, c),
      restoreSession: async (sid) => {
        await sleepMs(300);
        return inner.restoreSession(sid);
      },
      stats: () => inner.stats(),
      close: () => inner.close(),
    };
    const t = await start({}, { broker: slowRestore });
    const a = await open(t.wsUrl);
    a.c.send({ command: 'subscribe', identifier: pubsubId('early') });
    await a.c.take(1);
    a.c.close();
    await sleepMs(50);
    const b = new RawClient(`${t.wsUrl}?sid=${a.welcome.sid}`);
    clients.push(b);
    await b.opened;
    for (let i = 0; i < 200; i++) b.send({ command: 'ping' });
    const got = await b.take(201, 5000);
    expect(got[0]).toMatchObject({ type: 'welcome', restored: true });
    expect(got.slice(1).every((f) => f.type === 'pong')).toBe(true);
    expect(b.closed).toBeUndefined();
    expect(t.srv.counters.earlyFramePauses).toBe(1);
    // Large frames pause the socket by bytes (256 KiB) before 64 frames: 80 subscribes of ~4 KB
    // identifiers (~320 KB) during the restore are all answered, none refused.
    b.close();
    await sleepMs(50);
    const c = new RawClient(`${t.wsUrl}?sid=${a.welcome.sid}`);
    clients.push(c);
    await c.opened;
    const ids = Array.from({ length: 80 }, (_, i) => JSON.stringify({ channel: '$pubsub', stream_name: `early/${i}`, pad: 'e'.repeat(3900) }));
    for (const id of ids) c.send({ command: 'subscribe', identifier: id });
    const answers = await c.take(81, 5000);
    expect(answers[0]).toMatchObject({ type: 'welcome', restored: true });
    // 16 fit maxSessionBytes (64 KiB) next to the restored one; the rest are rejected, none refused.
    expect(answers.slice(1).every((f) => f.type === 'confirm_subscription' || f.type === 'reject_subscription')).toBe(true);
    expect(c.closed).toBeUndefined();
    expect(t.srv.counters.earlyFramePauses).toBe(2);
    await inner.close();
  });
});
