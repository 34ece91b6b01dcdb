import { createCable, type Cable } from '@anycable/core';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { startTestRedis, type TestRedis } from '../common/redis-testing.ts';
import { RedisBroker } from './broker/redis.ts';
import { sleepMs, startTestServer, type TestServer } from './testing.ts';

/**
 * Redis restarted: empty (a new epoch, handed over without dropping clients) and on an
 * fsync-always AOF (kill -9 loses nothing accepted). The official @anycable/core client.
 */

const redises: TestRedis[] = [];
const servers: TestServer[] = [];
const brokers: RedisBroker[] = [];
const cables: Cable[] = [];
afterEach(async () => {
  for (const c of cables.splice(0)) c.disconnect();
  for (const s of servers.splice(0)) await s.close();
  for (const b of brokers.splice(0)) await b.close();
  for (const r of redises.splice(0)) await r.close();
});

async function nodeOn(redis: TestRedis): Promise<{ t: TestServer; broker: RedisBroker }> {
  const broker = new RedisBroker({ historyLimit: 100, historyTtlSec: 300, sessionTtlSec: 300, url: redis.url, probeIntervalMs: 200 });
  await broker.connect();
  brokers.push(broker);
  const t = await startTestServer({}, { broker });
  servers.push(t);
  return { t, broker };
}

async function subscribed(t: TestServer, stream: string) {
  const cable = createCable(t.wsUrl, { protocol: 'actioncable-v1-ext-json', websocketImplementation: WebSocket, reconnectStrategy: () => 100, logLevel: 'error' });
  cables.push(cable);
  const seqs: number[] = [];
  const info: string[] = [];
  let disconnects = 0;
  cable.on('disconnect', () => disconnects++);
  const ch = cable.streamFrom(stream);
  ch.on('message', (msg) => seqs.push((msg as { seq: number }).seq));
  ch.on('info', (ev) => info.push(ev.type));
  await ch.ensureSubscribed();
  return { cable, seqs, info, disconnects: () => disconnects };
}
const publish = async (t: TestServer, stream: string, from: number, to: number) => {
  const r = await t.broadcast(Array.from({ length: to - from + 1 }, (_, i) => ({ stream, data: JSON.stringify({ seq: from + i }) })));
  expect(r.status).toBe(201);
};
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const terminate = (cable: Cable) => (cable.transport as unknown as { ws: WebSocket }).ws.terminate();

describe('Redis restarts under a running node', () => {
  it('empty restart: the node notices, clients stay connected and get the new epoch live; an old-epoch history request gets reject_history (epoch_changed) and then the new epoch from its first offset', async () => {
    const redis = await startTestRedis();
    redises.push(redis);
    const { t, broker } = await nodeOn(redis);
    const stay = await subscribed(t, 'ep');
    const away = await subscribed(t, 'ep');
    await publish(t, 'ep', 1, 3);
    await waitUntil(() => stay.seqs.length === 3 && away.seqs.length === 3, 3000, '1..3');
    await redis.stop();
    await redis.start();
    // The probe notices the epoch key gone (no publish needed).
    for (let i = 0; (await broker.stats().catch(() => undefined))?.epochChanges !== 1; i++) {
      if (i > 50) throw new Error('epoch change not noticed');
      await sleepMs(100);
    }
    // `away` drops and misses 4..6, published in the new epoch (its session went with Redis).
    terminate(away.cable);
    await publish(t, 'ep', 4, 6);
    await waitUntil(() => away.seqs.length >= 6, 5000, 'away resumed into the new epoch');
    await publish(t, 'ep', 7, 9);
    await waitUntil(() => stay.seqs.length >= 9 && away.seqs.length >= 9, 3000, '7..9');
    await sleepMs(300);
    expect(stay.seqs).toEqual(range(1, 9));
    expect(stay.disconnects()).toBe(0);
    expect(away.seqs).toEqual(range(1, 9));
    const st = await broker.stats();
    expect(st.epochChanges).toBe(1);
    expect(t.srv.counters.historyEpochHandovers).toBeGreaterThanOrEqual(1);
  });

  it('the reject_history names its cause (raw client), and the new epoch follows from offset 1', async () => {
    const redis = await startTestRedis();
    redises.push(redis);
    const { t, broker } = await nodeOn(redis);
    await publish(t, 'raw', 1, 2);
    const old = await broker.history('raw', { since: 0 });
    const oldEpoch = old.ok ? old.messages[0]!.epoch! : '';
    await redis.stop();
    await redis.start();
    await waitUntil(() => broker.isPastEpoch(oldEpoch), 5000, 'epoch change noticed');
    await publish(t, 'raw', 3, 4);
    const { connectRaw, pubsubId } = await import('./testing.ts');
    const { c } = await connectRaw(t.wsUrl);
    const id = pubsubId('raw');
    c.send({ command: 'subscribe', identifier: id, history: { streams: { raw: { epoch: oldEpoch, offset: 2 } } } });
    const got = await c.take(4);
    c.close();
    expect(got[0]).toMatchObject({ type: 'confirm_subscription' });
    expect(got[1]).toMatchObject({ type: 'reject_history', reason: 'epoch_changed' });
    expect(got.slice(2).map((f) => [(f.message as { seq: number }).seq, f.offset])).toEqual([
      [3, 1],
      [4, 2],
    ]);
  });

  it('AOF (appendfsync always): kill -9 of Redis and restart loses nothing accepted, same epoch', async () => {
    const redis = await startTestRedis({ persist: true });
    redises.push(redis);
    const { t, broker } = await nodeOn(redis);
    const s = await subscribed(t, 'aof');
    await publish(t, 'aof', 1, 50);
    await redis.stop('SIGKILL');
    await redis.start();
    await waitUntil(() => broker.health().ok, 5000, 'redis back');
    await publish(t, 'aof', 51, 60);
    await waitUntil(() => s.seqs.length >= 60, 5000, '60 messages');
    await sleepMs(200);
    expect(s.seqs).toEqual(range(1, 60));
    const h = await broker.history('aof', { since: 0 });
    expect(h.ok && h.messages.map((m) => m.offset)).toEqual(range(1, 60));
    expect((await broker.stats()).epochChanges).toBe(0);
  });
});
