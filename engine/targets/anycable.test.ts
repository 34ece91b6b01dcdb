import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { startTestServer, type TestServer } from '../../services/replay-server/testing.ts';
import { anycableTarget, cableUrl, reconnectStrategyFor, replayTarget, tunedReconnect } from './anycable.ts';
import type { ArrivedMessage, TargetClient } from './types.ts';

const servers: TestServer[] = [];
const clients: TargetClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) await s.close();
});

describe('strategies and URLs', () => {
  it('tuned: full jitter under min(5 s, 500 ms × 2^attempt)', () => {
    const max = tunedReconnect(() => 0.999999);
    expect([0, 1, 2, 3, 4, 10].map((a) => Math.round(max(a)))).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    expect(tunedReconnect(() => 0)(3)).toBe(0);
    expect(reconnectStrategyFor(undefined)).toBeUndefined();
    expect(reconnectStrategyFor('default')).toBeUndefined();
    expect(typeof reconnectStrategyFor('tuned')).toBe('function');
    expect(() => reconnectStrategyFor('warp')).toThrow(/unknown reconnect strategy/);
  });

  it('derives the cable URL', () => {
    expect(cableUrl('http://127.0.0.1:8080')).toBe('ws://127.0.0.1:8080/cable');
    expect(cableUrl('https://x.test/')).toBe('wss://x.test/cable');
    expect(cableUrl('ws://h:1/custom')).toBe('ws://h:1/custom');
  });

  it('definitions', () => {
    expect(replayTarget).toMatchObject({ name: 'replay', reconnect: 'library', replays: true, service: { name: 'replay', args: [] } });
    expect(anycableTarget).toMatchObject({ name: 'anycable', reconnect: 'library', replays: true });
    expect(anycableTarget.service).toBeUndefined();
  });
});

describe('replay target client', () => {
  it('connect → messages with offsets; drop → dropped, library reconnect, resumed, history ok; every message once', async () => {
    // ws transport: the test reads the peer address off node:http's upgrade event.
    const t = await startTestServer({ transport: 'ws' });
    servers.push(t);
    const remote: string[] = [];
    t.srv.httpServer!.on('upgrade', (req) => remote.push(req.socket.remoteAddress ?? ''));
    const client = replayTarget.createClient({ index: 0, url: t.httpUrl, stream: 'adapter/1', localAddress: '127.0.0.3', reconnectStrategy: 'tuned' });
    clients.push(client);
    const msgs: ArrivedMessage[] = [];
    const events: string[] = [];
    client.on('message', (m) => msgs.push(m));
    client.on('connected', (i) => events.push(`connected resumed=${i.resumed} attempt=${i.attempt}`));
    client.on('disconnected', (i) => events.push(`disconnected ${i.reason}`));
    client.on('history', (i) => events.push(`history ok=${i.ok}`));
    await client.connect();
    expect(remote).toEqual(['127.0.0.3']);
    const publish = (n: number) => t.broadcast({ stream: 'adapter/1', data: JSON.stringify({ seq: n, sentAt: Date.now() }) });
    await publish(1);
    await waitUntil(() => msgs.length === 1, 3000, 'first message');
    expect(JSON.parse(msgs[0]!.data)).toMatchObject({ seq: 1 });
    // The library's own parse is handed over (no stringify here and parse again in the decoder).
    expect(msgs[0]!.value).toMatchObject({ seq: 1 });
    expect(msgs[0]!.offset).toBe(1);
    expect(client.drop()).toBe(true);
    await publish(2);
    await waitUntil(() => events.some((e) => e.startsWith('connected resumed=true')), 8000, 'resumed');
    await publish(3);
    await waitUntil(() => msgs.length >= 3, 3000, 'all messages');
    expect(msgs.map((m) => m.offset)).toEqual([1, 2, 3]);
    expect(events).toEqual(['connected resumed=false attempt=0', 'disconnected dropped', 'connected resumed=true attempt=1', 'history ok=true']);
  });

  it('close() stops for good; drop() without a socket is false', async () => {
    const t = await startTestServer();
    servers.push(t);
    const client = replayTarget.createClient({ index: 1, url: t.httpUrl, stream: 'adapter/2' });
    expect(client.drop()).toBe(false);
    const reasons: string[] = [];
    client.on('disconnected', (i) => reasons.push(i.reason));
    await client.connect();
    client.close();
    await waitUntil(() => t.srv.connectionCount() === 0, 3000, 'server saw the close');
    expect(reasons).toEqual(['closed']);
    expect(client.drop()).toBe(false);
  });

  it('after a drop whose restore misses, `connected` comes only once the server confirmed the new subscribe', async () => {
    // sessionTtlSec 0: nothing to restore, so the client must subscribe again after the drop.
    const t = await startTestServer({ sessionTtlSec: 0 });
    servers.push(t);
    const client = replayTarget.createClient({ index: 4, url: t.httpUrl, stream: 'adapter/4', reconnectStrategy: 'tuned' });
    clients.push(client);
    const confirmedAtConnected: number[] = [];
    const resumed: boolean[] = [];
    client.on('connected', (i) => {
      confirmedAtConnected.push(t.srv.counters.subscribesConfirmed);
      resumed.push(i.resumed);
    });
    await client.connect();
    expect(confirmedAtConnected).toEqual([1]);
    expect(client.drop()).toBe(true);
    await waitUntil(() => confirmedAtConnected.length === 2, 8000, 'reconnected');
    expect(confirmedAtConnected[1]).toBe(2);
    expect(resumed).toEqual([false, false]);
  });

  it('server_restart surfaces as server_closed', async () => {
    const t = await startTestServer();
    const client = replayTarget.createClient({ index: 2, url: t.httpUrl, stream: 'adapter/3' });
    clients.push(client);
    const reasons: string[] = [];
    client.on('disconnected', (i) => reasons.push(`${i.reason}:${i.detail}`));
    await client.connect();
    await t.close();
    await waitUntil(() => reasons.length > 0, 3000, 'disconnect');
    expect(reasons[0]).toBe('server_closed:server_restart');
  });
});

describe('replay target client on a Redis that came back empty', () => {
  it("arrivals carry their stream epoch; a history request naming the ended epoch surfaces as history {ok: false, reason: 'epoch_changed'}", async () => {
    const { startTestRedis } = await import('../../services/common/redis-testing.ts');
    const { RedisBroker } = await import('../../services/replay-server/broker/redis.ts');
    const redis = await startTestRedis();
    const broker = new RedisBroker({ historyLimit: 100, historyTtlSec: 300, sessionTtlSec: 300, url: redis.url, probeIntervalMs: 200 });
    try {
      await broker.connect();
      const t = await startTestServer({}, { broker });
      servers.push(t);
      const client = replayTarget.createClient({ index: 5, url: t.httpUrl, stream: 'adapter/ep', reconnectStrategy: 'tuned' });
      clients.push(client);
      const msgs: ArrivedMessage[] = [];
      const history: { ok: boolean; reason?: string }[] = [];
      client.on('message', (m) => msgs.push(m));
      client.on('history', (h) => history.push(h));
      await client.connect();
      const publish = async (n: number) => expect((await t.broadcast({ stream: 'adapter/ep', data: JSON.stringify({ seq: n }) })).status).toBe(201);
      await publish(1);
      await waitUntil(() => msgs.length === 1, 3000, 'first message');
      await redis.stop();
      await redis.start();
      await waitUntil(() => broker.health().ok, 5000, 'redis back');
      for (let i = 0; (await broker.stats()).epochChanges !== 1; i++) {
        if (i > 50) throw new Error('epoch change not noticed');
        await new Promise((r) => setTimeout(r, 100));
      }
      // Away while the new epoch starts: its resubscribe names the old epoch.
      expect(client.drop()).toBe(true);
      await publish(2);
      await waitUntil(() => msgs.length >= 2 && history.some((h) => !h.ok), 8000, 'back, with the new epoch');
      expect(history.filter((h) => !h.ok)).toEqual([{ ok: false, reason: 'epoch_changed' }]);
      expect(msgs.map((m) => JSON.parse(m.data).seq)).toEqual([1, 2]);
      expect(msgs[0]!.epoch).toBeTruthy();
      expect(msgs[1]!.epoch).toBeTruthy();
      expect(msgs[1]!.epoch).not.toBe(msgs[0]!.epoch);
      expect(msgs[1]!.offset).toBe(1);
    } finally {
      for (const c of clients.splice(0)) c.close();
      for (const s of servers.splice(0)) await s.close();
      await broker.close();
      await redis.close();
    }
  });
});
