import { createCable, type Cable } from '@anycable/core';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../chaos/testing.ts';
import { createToxiproxyServer, type ToxiproxyServer } from '../../chaos/toxiproxy/index.ts';
import type { ReboundError } from '../../lib/errors.ts';
import { waitUntil } from '../../lib/time.ts';
import { startTestRedis, type TestRedis } from '../common/redis-testing.ts';
import { startService, type ServiceHandle } from '../common/spawn.ts';
import { pubsubId, RawClient, sleepMs, type Frame } from './testing.ts';

/**
 * Several replay server processes behind one real redis-server (--broker redis) as one service:
 * publish anywhere, deliver everywhere, restore anywhere, survive any node's SIGKILL and Redis's
 * own outage with every offset exactly once.
 */

let redis: TestRedis;
const handles: ServiceHandle[] = [];
const cables: Cable[] = [];
const raws: RawClient[] = [];
beforeAll(async () => {
  redis = await startTestRedis({ persist: true });
});
afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  for (const c of cables.splice(0)) c.disconnect();
  for (const c of raws.splice(0)) c.close();
  for (const h of handles.splice(0)) await h.kill();
  if (!redis.running) await redis.start();
});

let prefixSeq = 0;
async function node(prefix: string, extra: string[] = [], url = redis.url): Promise<ServiceHandle> {
  const h = await startService('replay', { args: ['--broker', 'redis', '--redis-url', url, '--redis-prefix', prefix, ...extra] });
  handles.push(h);
  return h;
}
const post = (h: ServiceHandle, body: unknown) => fetch(`${h.httpUrl}/_broadcast`, { method: 'POST', body: JSON.stringify(body) });
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

async function raw(h: ServiceHandle, query = ''): Promise<{ c: RawClient; welcome: Frame }> {
  const c = new RawClient(`ws://127.0.0.1:${h.port}/cable${query}`);
  raws.push(c);
  await c.opened;
  const [welcome] = await c.take(1);
  return { c, welcome: welcome! };
}

describe('replay server on Redis: several nodes as one service', () => {
  it('publishes on node A, delivers on node B, one offset sequence; history and sessions from either node', async () => {
    const prefix = `n${++prefixSeq}:`;
    const [a, b] = await Promise.all([node(prefix), node(prefix)]);
    const id = pubsubId('ab/1');
    const onA = await raw(a);
    const onB = await raw(b);
    for (const x of [onA, onB]) {
      x.c.send({ command: 'subscribe', identifier: id });
      expect((await x.c.take(1))[0]).toMatchObject({ type: 'confirm_subscription' });
    }
    for (let i = 1; i <= 4; i++) expect((await post(i % 2 ? a : b, { stream: 'ab/1', data: JSON.stringify({ i }) })).status).toBe(201);
    const [fa, fb] = await Promise.all([onA.c.take(4), onB.c.take(4)]);
    expect(fa.map((f) => f.offset)).toEqual([1, 2, 3, 4]);
    expect(fb).toEqual(fa);
    // A late client on B reads the backlog A's publishes stored; a session made on A restores on B.
    const late = await raw(b);
    late.c.send({ command: 'subscribe', identifier: id, history: { streams: { 'ab/1': { epoch: fa[0]!.epoch, offset: 2 } } } });
    expect((await late.c.take(4)).map((f) => f.offset ?? f.type)).toEqual(['confirm_subscription', 3, 4, 'confirm_history']);
    onA.c.close();
    await sleepMs(100);
    const back = await raw(b, `?sid=${onA.welcome.sid}`);
    expect(back.welcome).toMatchObject({ restored: true, restored_ids: [id] });
    const m = (await (await fetch(`${b.httpUrl}/metrics`)).json()) as { broker: { kind: string; published: number } };
    expect(m.broker).toMatchObject({ kind: 'redis', published: 4 });
  });

  it('SIGKILL of the node a client is on, mid-stream: @anycable/core restores on the other node, every offset exactly once', async () => {
    const prefix = `n${++prefixSeq}:`;
    const [a, b] = await Promise.all([node(prefix), node(prefix)]);
    // The "load balancer": the official client, unchanged, dials whichever node is alive.
    let target = a;
    class Balanced extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        const u = new URL(url); // keeps the client's ?sid= (its restore request)
        u.port = String(target.port);
        super(u.toString(), protocols);
      }
    }
    const cable = createCable(`ws://127.0.0.1:${a.port}/cable`, { protocol: 'actioncable-v1-ext-json', websocketImplementation: Balanced, reconnectStrategy: () => 100, logLevel: 'error' });
    cables.push(cable);
    const seqs: number[] = [];
    const offsets: number[] = [];
    const connects: Array<{ restored?: boolean }> = [];
    cable.on('connect', (ev) => connects.push(ev));
    const ch = cable.streamFrom('fo/1');
    ch.on('message', (msg, meta) => {
      seqs.push((msg as { seq: number }).seq);
      offsets.push((meta as { offset: number }).offset);
    });
    await ch.ensureSubscribed();
    const total = 150;
    let sent = 0;
    const publisher = (async () => {
      for (let seq = 1; seq <= total; seq++) {
        expect((await post(b, { stream: 'fo/1', data: JSON.stringify({ seq }) })).status).toBe(201);
        sent = seq;
        await sleepMs(4);
      }
    })();
    await waitUntil(() => seqs.length >= 40, 10_000, '40 messages on node A');
    target = b;
    await a.kill('SIGKILL');
    await publisher;
    expect(sent).toBe(total);
    await waitUntil(() => seqs.length >= total, 10_000, `all ${total} messages`);
    await sleepMs(300);
    expect(seqs).toEqual(range(1, total));
    expect(offsets).toEqual(range(1, total));
    expect(connects).toHaveLength(2);
    expect(connects[1]).toMatchObject({ restored: true });
  });

  it('the epoch survives a full restart of every node: old positions are still served', async () => {
    const prefix = `n${++prefixSeq}:`;
    let a = await node(prefix);
    let b = await node(prefix);
    await post(a, [1, 2, 3].map((i) => ({ stream: 'ep/1', data: String(i) })));
    const first = await raw(b);
    first.c.send({ command: 'subscribe', identifier: pubsubId('ep/1'), history: { since: 1 } });
    const before = await first.c.take(5);
    const epoch = before[1]!.epoch;
    expect(before.map((f) => f.offset ?? f.type)).toEqual(['confirm_subscription', 1, 2, 3, 'confirm_history']);
    await a.kill('SIGKILL');
    await b.kill('SIGKILL');
    a = await node(prefix);
    b = await node(prefix);
    await post(b, { stream: 'ep/1', data: '4' });
    const again = await raw(a);
    again.c.send({ command: 'subscribe', identifier: pubsubId('ep/1'), history: { streams: { 'ep/1': { epoch, offset: 2 } } } });
    const after = await again.c.take(4);
    expect(after.map((f) => f.offset ?? f.type)).toEqual(['confirm_subscription', 3, 4, 'confirm_history']);
    expect(after[1]!.epoch).toBe(epoch);
  });

  it('full restart of every node (Redis stays): the client resumes its session on the restarted node, 0 lost, 0 duplicated', async () => {
    const prefix = `n${++prefixSeq}:`;
    let a = await node(prefix);
    let b = await node(prefix);
    const cable = createCable(`ws://127.0.0.1:${a.port}/cable`, { protocol: 'actioncable-v1-ext-json', websocketImplementation: WebSocket, reconnectStrategy: () => 100, logLevel: 'error' });
    cables.push(cable);
    const seqs: number[] = [];
    const connects: Array<{ restored?: boolean }> = [];
    cable.on('connect', (ev) => connects.push(ev));
    const ch = cable.streamFrom('full/1');
    ch.on('message', (msg) => seqs.push((msg as { seq: number }).seq));
    await ch.ensureSubscribed();
    const pub = (h: ServiceHandle, from: number, to: number) => post(h, range(from, to).map((seq) => ({ stream: 'full/1', data: JSON.stringify({ seq }) })));
    expect((await pub(b, 1, 10)).status).toBe(201);
    await waitUntil(() => seqs.length === 10, 5000, 'first 10');
    await Promise.all([a.kill('SIGKILL'), b.kill('SIGKILL')]);
    // B comes back first and publishes while A (the client's node) is still down.
    const nb = await b.restart();
    handles.push(nb);
    b = nb;
    expect((await pub(b, 11, 20)).status).toBe(201);
    const na = await a.restart();
    handles.push(na);
    a = na;
    await waitUntil(() => seqs.length >= 20, 10_000, 'backlog after restart');
    expect((await pub(b, 21, 30)).status).toBe(201);
    await waitUntil(() => seqs.length >= 30, 5000, 'live after restart');
    await sleepMs(300);
    expect(seqs).toEqual(range(1, 30));
    expect(connects.at(-1)).toMatchObject({ reconnect: true, restored: true });
  });

  it('--workers 2 on each of two nodes: one offset sequence across all four processes', async () => {
    const prefix = `n${++prefixSeq}:`;
    const [a, b] = await Promise.all([node(prefix, ['--workers', '2']), node(prefix, ['--workers', '2'])]);
    const clients = await Promise.all([raw(a), raw(a), raw(b), raw(b)]);
    for (const x of clients) {
      x.c.send({ command: 'subscribe', identifier: pubsubId('wk/1') });
      await x.c.take(1);
    }
    for (let i = 1; i <= 6; i++) expect((await post(i % 2 ? a : b, { stream: 'wk/1', data: String(i) })).status).toBe(201);
    for (const x of clients) expect((await x.c.take(6)).map((f) => [f.offset, f.message])).toEqual(range(1, 6).map((i) => [i, i]));
  });
});

describe('replay server on Redis: faults', () => {
  it('Redis unreachable at start: one clear coded line and exit 1; a malformed URL exit 2', async () => {
    const startError = (redisUrl: string) => startService('replay', { args: ['--broker', 'redis', '--redis-url', redisUrl] }).then(
      () => expect.fail('started without Redis'),
      (e: ReboundError) => e,
    );
    const down = await startError('redis://127.0.0.1:1');
    expect(down.code).toBe('RR_ERR_SERVICE_START');
    expect(down.details!.exitCode).toBe(1); // a failure (docs/errors.md)
    expect(down.message).toContain('RR_ERR_REDIS_UNAVAILABLE');
    expect(down.message).toContain('redis://127.0.0.1:1');
    // Not a Redis URL at all: refused at the edge, before any connection attempt.
    const bad = await startError('localhost:6379');
    expect(bad.details!.exitCode).toBe(2); // bad input
    expect(bad.message).toContain('RR_ERR_OPTION_INVALID');
    expect(bad.message).toContain('redis-url');
  });

  it('Redis stopped under a running node: connections stay, /health and /_broadcast answer 503, then it recovers with no gap', async () => {
    const prefix = `n${++prefixSeq}:`;
    const a = await node(prefix);
    const sub = await raw(a);
    sub.c.send({ command: 'subscribe', identifier: pubsubId('down/1') });
    await sub.c.take(1);
    expect((await post(a, [1, 2].map((i) => ({ stream: 'down/1', data: String(i) })))).status).toBe(201);
    expect((await sub.c.take(2)).map((f) => f.offset)).toEqual([1, 2]);
    await redis.stop('SIGKILL');
    await eventually(async () => (await fetch(`${a.httpUrl}/health`)).status === 503, 5000, 'health 503');
    expect(await (await fetch(`${a.httpUrl}/health`)).json()).toMatchObject({ status: 'degraded', service: 'replay' });
    const r = await post(a, { stream: 'down/1', data: '"lost?"' });
    expect(r.status).toBe(503);
    expect(await r.json()).toMatchObject({ statusCode: 503, code: 'RR_ERR_REPLAY_STORE_FAILED', error: 'Service Unavailable' });
    expect(sub.c.closed).toBeUndefined();
    await redis.start();
    await eventually(async () => (await fetch(`${a.httpUrl}/health`)).status === 200, 10_000, 'health 200 again');
    const again = await post(a, [3, 4].map((i) => ({ stream: 'down/1', data: String(i) })));
    expect(again.status, await again.clone().text()).toBe(201);
    expect((await sub.c.take(2)).map((f) => [f.offset, f.message])).toEqual([[3, 3], [4, 4]]);
    expect(sub.c.closed).toBeUndefined();
  });

  describe('a node cut off from Redis while another publishes', () => {
    let tp: ToxiproxyServer;
    beforeAll(async () => {
      tp = await createToxiproxyServer({ port: 0 });
    });
    afterAll(async () => {
      await tp.close();
    });

    it('catches up from Redis once the link is back: no gap, no duplicate', async () => {
      const api = (path: string, body: unknown) => fetch(`${tp.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const created = (await (await api('/proxies', { name: 'redis', listen: '127.0.0.1:0', upstream: `127.0.0.1:${redis.port}`, enabled: true })).json()) as { listen: string };
      const prefix = `n${++prefixSeq}:`;
      const a = await node(prefix, [], `redis://${created.listen}`);
      const b = await node(prefix);
      const sub = await raw(a);
      sub.c.send({ command: 'subscribe', identifier: pubsubId('cut/1') });
      await sub.c.take(1);
      await post(b, { stream: 'cut/1', data: '1' });
      expect((await sub.c.take(1))[0]).toMatchObject({ offset: 1 });
      expect((await api('/proxies/redis', { enabled: false })).status).toBe(200);
      await eventually(async () => (await fetch(`${a.httpUrl}/health`)).status === 503, 5000, 'A degraded');
      for (let i = 2; i <= 30; i++) expect((await post(b, { stream: 'cut/1', data: String(i) })).status).toBe(201);
      expect(sub.c.drain()).toEqual([]);
      expect((await api('/proxies/redis', { enabled: true })).status).toBe(200);
      const got = await sub.c.take(29, 10_000);
      expect(got.map((f) => f.offset)).toEqual(range(2, 30));
      expect(got.map((f) => f.message)).toEqual(range(2, 30));
      await sleepMs(300);
      expect(sub.c.drain()).toEqual([]);
      const m = (await (await fetch(`${a.httpUrl}/metrics`)).json()) as { broker: { feedGaps: number } };
      expect(m.broker.feedGaps).toBe(0);
      await api('/proxies/redis', { enabled: false });
      await fetch(`${tp.url}/proxies/redis`, { method: 'DELETE' });
    });

    it('cut off longer than the feed keeps: its clients are sent to resume by history, still exactly once', async () => {
      const api = (path: string, body: unknown) => fetch(`${tp.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const created = (await (await api('/proxies', { name: 'redis2', listen: '127.0.0.1:0', upstream: `127.0.0.1:${redis.port}`, enabled: true })).json()) as { listen: string };
      const prefix = `n${++prefixSeq}:`;
      const small = ['--redis-feed-max-len', '100', '--history-limit', '5000'];
      const a = await node(prefix, small, `redis://${created.listen}`);
      const b = await node(prefix, small);
      const cable = createCable(`ws://127.0.0.1:${a.port}/cable`, { protocol: 'actioncable-v1-ext-json', websocketImplementation: WebSocket, reconnectStrategy: () => 100, logLevel: 'error' });
      cables.push(cable);
      const seqs: number[] = [];
      const connects: Array<{ restored?: boolean }> = [];
      cable.on('connect', (ev) => connects.push(ev));
      const ch = cable.streamFrom('gap/1');
      ch.on('message', (msg) => seqs.push((msg as { seq: number }).seq));
      await ch.ensureSubscribed();
      await post(b, { stream: 'gap/1', data: JSON.stringify({ seq: 1 }) });
      await waitUntil(() => seqs.length === 1, 5000, 'first message');
      await api('/proxies/redis2', { enabled: false });
      await eventually(async () => (await fetch(`${a.httpUrl}/health`)).status === 503, 5000, 'A degraded');
      // 1,000 entries while A is away: the feed (about 100 kept) no longer reaches back to A's position.
      const total = 1001;
      expect((await post(b, range(2, total).map((seq) => ({ stream: 'gap/1', data: JSON.stringify({ seq }) })))).status).toBe(201);
      await api('/proxies/redis2', { enabled: true });
      await waitUntil(() => seqs.length >= total, 15_000, `all ${total} messages`);
      await sleepMs(300);
      expect(seqs).toEqual(range(1, total));
      // `disconnect server_restart` makes @anycable/core forget its sid: it resubscribes with history from its own position.
      expect(connects.length).toBe(2);
      expect(connects[1]).toMatchObject({ reconnect: true, restored: false });
      const m = (await (await fetch(`${a.httpUrl}/metrics`)).json()) as { resyncs: number; broker: { feedGaps: number } };
      expect(m.resyncs).toBe(1);
      expect(m.broker.feedGaps).toBeGreaterThan(0);
    });
  });
});
