import { createCable } from '@anycable/core';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { MemoryBroker } from './broker/memory.ts';
import type { Broker } from './broker/types.ts';
import { pubsubId, sleepMs, startTestServer } from './testing.ts';
import { useTestServers } from './test-fixture.ts';

/**
 * Delivery correctness under bursts the server creates itself (issue 8, items 1-3): a large
 * backlog or batch is paced by the socket instead of cutting a reading client; a gap is never
 * confirmed; 201 means stored.
 */

const { start, open } = useTestServers();

describe('back-pressure paces what the server sends (item 1)', () => {
  it('a fresh subscribe replays a backlog far above maxBufferedBytes completely, then confirms', async () => {
    const t = await start({ maxBufferedBytes: 16 * 1024, historyLimit: 200 });
    const data = JSON.stringify({ pad: 'h'.repeat(20_000) });
    for (let i = 0; i < 10; i++) await t.broadcast(Array.from({ length: 10 }, () => ({ stream: 'big/1', data })));
    const { c } = await open(t.wsUrl);
    const id = pubsubId('big/1');
    c.send({ command: 'subscribe', identifier: id, history: { since: Math.floor(Date.now() / 1000) - 60 } });
    const got = await c.take(102, 10_000);
    expect(got[0]).toEqual({ type: 'confirm_subscription', identifier: id });
    expect(got.slice(1, 101).map((f) => f.offset)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(got[101]).toEqual({ type: 'confirm_history', identifier: id });
    expect(t.srv.counters.disconnects.too_slow).toBe(0);
  });

  it('a reading client takes one accepted batch of 2 x 4 MiB (default limits) without too_slow', async () => {
    const t = await start();
    const { c } = await open(t.wsUrl);
    c.send({ command: 'subscribe', identifier: pubsubId('big/2') });
    await c.take(1);
    const data = JSON.stringify('x'.repeat(4 * 1024 * 1024 - 64));
    const res = await t.broadcast([
      { stream: 'big/2', data },
      { stream: 'big/2', data },
    ]);
    expect(res.status).toBe(201);
    const got = await c.take(2, 15_000);
    expect(got.map((f) => f.offset)).toEqual([1, 2]);
    expect(t.srv.counters.disconnects.too_slow).toBe(0);
  });

  it('the official client catches up on a backlog far above maxBufferedBytes after a restore (no too_slow loop)', async () => {
    const t = await start({ maxBufferedBytes: 16 * 1024, historyLimit: 200 });
    const cable = createCable(t.wsUrl, { protocol: 'actioncable-v1-ext-json', websocketImplementation: WebSocket, reconnectStrategy: () => 100, logLevel: 'error' });
    const seqs: number[] = [];
    try {
      const ch = cable.streamFrom('big/official');
      ch.on('message', (m) => seqs.push((m as { seq: number }).seq));
      await ch.ensureSubscribed();
      await t.broadcast({ stream: 'big/official', data: JSON.stringify({ seq: 1 }) });
      await waitUntil(() => seqs.length === 1, 3000, 'first message');
      (cable.transport as unknown as { ws: WebSocket }).ws.terminate();
      const pad = 'o'.repeat(20_000);
      for (let i = 0; i < 10; i++) await t.broadcast(Array.from({ length: 10 }, (_, k) => ({ stream: 'big/official', data: JSON.stringify({ seq: 2 + i * 10 + k, pad }) })));
      await waitUntil(() => seqs.length >= 101, 15_000, 'the whole backlog');
      expect(seqs).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
      expect(t.srv.counters.disconnects.too_slow).toBe(0);
    } finally {
      cable.disconnect();
    }
  });

  it('too_slow is for a consumer that makes no progress: a paused reader is cut after slowConsumerMs', async () => {
    const t = await start({ maxBufferedBytes: 16 * 1024, slowConsumerMs: 300 });
    const { c } = await open(t.wsUrl);
    c.send({ command: 'subscribe', identifier: pubsubId('stall') });
    await c.take(1);
    (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    // Well under maxQueuedBytes (32 MiB): only the lack of progress can trip it.
    const data = JSON.stringify('s'.repeat(256 * 1024));
    for (let i = 0; i < 40 && t.srv.counters.slowConsumerStalls === 0; i++) {
      await t.broadcast({ stream: 'stall', data });
      await sleepMs(20);
    }
    for (let i = 0; i < 100 && t.srv.counters.slowConsumerStalls === 0; i++) await sleepMs(20);
    expect(t.srv.counters.slowConsumerStalls).toBe(1);
    expect(t.srv.counters.queueOverflows).toBe(0);
    expect(t.srv.counters.disconnects.too_slow).toBe(1);
  });

  it('limits are checked against each other: a queue smaller than two bodies is refused at startup', async () => {
    await expect(startTestServer({ maxBodyBytes: 1024 * 1024, maxQueuedBytes: 1024 * 1024 })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
  });
});

describe('never confirm a gap (item 2)', () => {
  it('after restoreHoldMs released live frames, a history from below them is rejected, not confirmed', async () => {
    const t = await start({ restoreHoldMs: 150 });
    const id = pubsubId('gap/1');
    const a = await open(t.wsUrl);
    a.c.send({ command: 'subscribe', identifier: id });
    await a.c.take(1);
    await t.broadcast({ stream: 'gap/1', data: '{"n":1}' });
    const [m1] = await a.c.take(1);
    a.c.close();
    await sleepMs(50);
    await t.broadcast([
      { stream: 'gap/1', data: '{"n":2}' },
      { stream: 'gap/1', data: '{"n":3}' },
    ]);
    const b = await open(`${t.wsUrl}?sid=${a.welcome.sid}`);
    expect(b.welcome.restored).toBe(true);
    await sleepMs(300); // the hold expires without a history command
    await t.broadcast({ stream: 'gap/1', data: '{"n":4}' });
    expect((await b.c.take(1))[0]).toMatchObject({ offset: 4 });
    // Offsets 2 and 3 were never delivered on this connection: confirming would hide them.
    b.c.send({ command: 'history', identifier: id, history: { streams: { 'gap/1': { epoch: m1!.epoch, offset: 1 } } } });
    const [answer] = await b.c.take(1);
    expect(answer).toEqual({ type: 'reject_history', identifier: id, reason: 'history_gap' });
    expect(t.srv.counters.historyGapsRejected).toBe(1);
    // A position inside what was delivered is fine.
    b.c.send({ command: 'history', identifier: id, history: { streams: { 'gap/1': { epoch: m1!.epoch, offset: 3 } } } });
    expect(await b.c.take(1)).toEqual([{ type: 'confirm_history', identifier: id }]);
  });
});

describe('/_broadcast 201 means stored (item 3)', () => {
  it('a failed store answers 503 RR_ERR_REPLAY_STORE_FAILED, not 201', async () => {
    const inner = new MemoryBroker({ historyLimit: 10, historyTtlSec: 60, sessionTtlSec: 60 });
    let fail = true;
    const broker: Broker = {
      kind: 'failing',
      publish: (items) => (fail ? Promise.reject(new Error('disk on fire')) : inner.publish(items)),
      onMessages: (l) => inner.onMessages(l),
      history: (s, p, page) => inner.history(s, p, page),
      commitSession: (sid, s) => inner.commitSession(sid, s),
      updateSession: (sid, c) => inner.updateSession(sid, c),
      restoreSession: (sid) => inner.restoreSession(sid),
      stats: () => inner.stats(),
      close: () => inner.close(),
    };
    const t = await start({}, { broker });
    const res = await t.broadcast({ stream: 's', data: 'x' });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ statusCode: 503, error: 'Service Unavailable', code: 'RR_ERR_REPLAY_STORE_FAILED' });
    fail = false;
    expect((await t.broadcast({ stream: 's', data: 'x' })).status).toBe(201);
    expect(inner.statsSync().historyMessages).toBe(1);
    await inner.close();
  });

  it('the other /_broadcast answers are unchanged (401, 400, 422, 413)', async () => {
    const t = await start({ broadcastKey: 'k', maxBodyBytes: 2048, maxQueuedBytes: 1024 * 1024 });
    expect((await t.broadcast({ stream: 's', data: 'x' })).status).toBe(401);
    expect((await t.broadcast('{nope', 'k')).status).toBe(400);
    expect((await t.broadcast({ data: 'x' }, 'k')).status).toBe(422);
    const big = await t.broadcast({ stream: 's', data: 'x'.repeat(4096) }, 'k');
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ code: 'RR_ERR_PAYLOAD_TOO_LARGE' });
    expect((await t.broadcast({ stream: 's', data: 'x' }, 'k')).status).toBe(201);
  });
});

describe('rolling reload outside cluster mode', () => {
  it('POST /_admin/reload on a single process answers 400 RR_ERR_RELOAD_UNAVAILABLE', async () => {
    const t = await start();
    const res = await fetch(`${t.httpUrl}/_admin/reload`, { method: 'POST' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'RR_ERR_RELOAD_UNAVAILABLE' });
  });
});
