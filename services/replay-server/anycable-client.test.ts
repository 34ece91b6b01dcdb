import { createCable, type Cable } from '@anycable/core';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { createReplayServer } from './index.ts';
import { sleepMs, startTestServer, testTransport, type TestServer } from './testing.ts';

/**
 * The unmodified `@anycable/core` client (Node, `ws`) against the replay server: the library's
 * own reconnect and resume must yield every message exactly once and in order (the client does
 * not de-duplicate, so the server must not send duplicates).
 */

const servers: TestServer[] = [];
const cables: Cable[] = [];
afterEach(async () => {
  for (const c of cables.splice(0)) c.disconnect();
  for (const s of servers.splice(0)) await s.close();
});

function cableFor(t: TestServer): Cable {
  const cable = createCable(t.wsUrl, {
    protocol: 'actioncable-v1-ext-json',
    websocketImplementation: WebSocket,
    reconnectStrategy: () => 100,
    logLevel: 'error',
  });
  cables.push(cable);
  return cable;
}

const terminate = (cable: Cable) => (cable.transport as unknown as { ws: WebSocket }).ws.terminate();

async function subscribed(t: TestServer, stream: string) {
  const cable = cableFor(t);
  const offsets: number[] = [];
  const seqs: number[] = [];
  const info: string[] = [];
  const connects: Array<{ restored?: boolean; reconnect?: boolean }> = [];
  cable.on('connect', (ev) => connects.push(ev));
  const ch = cable.streamFrom(stream);
  ch.on('message', (msg, meta) => {
    offsets.push((meta as { offset: number }).offset);
    seqs.push((msg as { seq: number }).seq);
  });
  ch.on('info', (ev) => info.push(ev.type));
  await ch.ensureSubscribed();
  return { cable, offsets, seqs, info, connects };
}

const publish = (t: TestServer, stream: string, from: number, to: number) =>
  t.broadcast(Array.from({ length: to - from + 1 }, (_, i) => ({ stream, data: JSON.stringify({ seq: from + i }) })));
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe('@anycable/core against the replay server', () => {
  it('subscribe, receive, terminate, miss broadcasts, restore session: 1..15 exactly once, in order', async () => {
    const t = await startTestServer();
    servers.push(t);
    const s = await subscribed(t, 'int/1');
    await publish(t, 'int/1', 1, 5);
    await waitUntil(() => s.seqs.length === 5, 3000, '5 live messages');
    terminate(s.cable);
    await publish(t, 'int/1', 6, 10); // offline
    await waitUntil(() => s.connects.length === 2, 3000, 'reconnect');
    expect(s.connects[1]).toMatchObject({ reconnect: true, restored: true });
    await publish(t, 'int/1', 11, 15);
    await waitUntil(() => s.seqs.length >= 15, 3000, '15 messages');
    await sleepMs(300);
    expect(s.seqs).toEqual(range(1, 15));
    expect(s.offsets).toEqual(range(1, 15));
    expect(s.info).toContain('history_received');
    expect(t.srv.counters.restoreHits).toBe(1);
  });

  it('restore miss (sessions off) falls back to re-subscribe with history by offset', async () => {
    const t = await startTestServer({ sessionTtlSec: 0 });
    servers.push(t);
    const s = await subscribed(t, 'int/2');
    await publish(t, 'int/2', 1, 3);
    await waitUntil(() => s.seqs.length === 3, 3000, '3 live messages');
    terminate(s.cable);
    await publish(t, 'int/2', 4, 8);
    await waitUntil(() => s.seqs.length >= 8, 5000, 'backlog after resubscribe');
    await sleepMs(300);
    expect(s.connects[1]).toMatchObject({ reconnect: true, restored: false });
    expect(s.seqs).toEqual(range(1, 8));
    expect(t.srv.counters.restoreHits).toBe(0);
  });

  it('continuous publishing across repeated drops: no duplicates, no gaps', async () => {
    const t = await startTestServer();
    servers.push(t);
    const subs = await Promise.all([subscribed(t, 'int/3'), subscribed(t, 'int/3'), subscribed(t, 'int/3')]);
    let seq = 0;
    let publishing = true;
    const publisher = (async () => {
      while (publishing) {
        seq++;
        await publish(t, 'int/3', seq, seq);
        await sleepMs(3);
      }
    })();
    for (let round = 0; round < 5; round++) {
      await sleepMs(80);
      for (const s of subs) terminate(s.cable);
      for (const s of subs) await waitUntil(() => s.connects.length === round + 2, 3000, `reconnect ${round + 1}`);
    }
    await sleepMs(300);
    publishing = false;
    await publisher;
    for (const s of subs) await waitUntil(() => s.seqs.length >= seq, 5000, `all ${seq} messages`);
    await sleepMs(300);
    for (const s of subs) {
      expect(s.seqs).toEqual(range(1, seq));
      expect(s.connects.length).toBe(6);
      expect(s.connects.slice(1).every((c) => c.restored)).toBe(true);
    }
  });

  it('server restart: clients get server_restart, reconnect without restore, history by offset', async () => {
    const t = await startTestServer();
    servers.push(t);
    const s = await subscribed(t, 'int/4');
    const disconnects: string[] = [];
    s.cable.on('disconnect', (e) => disconnects.push((e as { reason?: string }).reason ?? ''));
    await publish(t, 'int/4', 1, 2);
    await waitUntil(() => s.seqs.length === 2, 3000, 'messages');
    const port = t.srv.port;
    await t.close();
    servers.splice(0);
    // (uWS: stop() may return before the client read the goodbye)
    await waitUntil(() => disconnects.includes('server_restart'), 3000, 'server_restart');
    // a fresh server on the same port: new epoch, so the old position cannot be served
    const srv = createReplayServer({ transport: testTransport() });
    await srv.listen(port, '127.0.0.1');
    try {
      await waitUntil(() => s.info.includes('history_not_found'), 8000, 'reject_history after restart');
      expect(s.connects.at(-1)).toMatchObject({ restored: false });
    } finally {
      s.cable.disconnect();
      await srv.stop();
    }
  });
});
