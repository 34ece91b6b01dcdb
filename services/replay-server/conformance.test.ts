import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBroker } from './broker/memory.ts';
import type { Broker, HistoryPosition } from './broker/types.ts';
import { signStreamName } from './protocol/streams.ts';
import { connectRaw, pubsubId, RawClient, sleepMs, startTestServer, type Frame, type TestServer } from './testing.ts';

/**
 * Wire-level conformance: raw `ws` clients, exact JSON frames, one protocol point per test.
 * docs/protocol/replay-v1.md is the prose version of this file.
 */

const EXT = 'actioncable-v1-ext-json';
const BASE = 'actioncable-v1-json';
const clients: RawClient[] = [];
const track = <T extends { c: RawClient }>(x: T): T => {
  clients.push(x.c);
  return x;
};
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

const data = (f: Frame) => f.identifier !== undefined && f.message !== undefined && f.type === undefined;

describe('handshake and welcome', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('echoes actioncable-v1-ext-json and welcomes with a sid', async () => {
    const { c, welcome } = track(await connectRaw(t.wsUrl, EXT));
    expect(c.ws.protocol).toBe(EXT);
    expect(Object.keys(welcome)).toEqual(['type', 'sid']);
    expect(welcome.type).toBe('welcome');
    expect(welcome.sid).toMatch(/^[\w-]{8,}$/);
    expect(c.raw[0]).toBe(`{"type":"welcome","sid":"${welcome.sid}"}`);
  });

  it('echoes actioncable-v1-json (base protocol) and still sends a sid', async () => {
    const { c, welcome } = track(await connectRaw(t.wsUrl, BASE));
    expect(c.ws.protocol).toBe(BASE);
    expect(welcome.type).toBe('welcome');
  });

  it('prefers ext when both are offered, accepts no subprotocol, refuses only-unknown ones', async () => {
    const both = track(await connectRaw(t.wsUrl, [BASE, EXT]));
    expect(both.c.ws.protocol).toBe(EXT);
    const none = track(await connectRaw(t.wsUrl, []));
    expect(none.c.ws.protocol).toBe('');
    const bad = new RawClient(t.wsUrl, 'actioncable-v1-msgpack');
    clients.push(bad);
    await expect(bad.opened).rejects.toThrow(/no subprotocol/i);
  });

  it('answers 404 on another path', async () => {
    const c = new RawClient(t.wsUrl.replace('/cable', '/nope'), EXT);
    clients.push(c);
    await expect(c.opened).rejects.toThrow(/404/);
  });

  it('every sid is fresh', async () => {
    const a = track(await connectRaw(t.wsUrl));
    const b = track(await connectRaw(t.wsUrl));
    expect(a.welcome.sid).not.toBe(b.welcome.sid);
  });
});

describe('ping / pong', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  // One shared frame per tick is checked in connection/ping.test.ts (fake timers).
  it('?pi=1 pings every second with an integer unix-seconds timestamp', async () => {
    const a = track(await connectRaw(`${t.wsUrl}?pi=1`));
    const b = track(await connectRaw(`${t.wsUrl}?pi=1`));
    const pa = await a.c.waitFor((f) => f.type === 'ping', 2500, 'ping');
    await b.c.waitFor((f) => f.type === 'ping', 2500, 'ping');
    expect(a.c.raw.find((r) => r.startsWith('{"type":"ping"'))).toBe(`{"type":"ping","message":${pa.message}}`);
    expect(Number.isInteger(pa.message)).toBe(true);
    expect(Math.abs((pa.message as number) - Date.now() / 1000)).toBeLessThan(3);
    // a second ping within the next interval (plus one tick)
    await a.c.waitFor((f) => f.type === 'ping' && f !== pa, 1500, 'second ping');
  });

  it('a due ping leaves in the same write as the next data frame (connection/ping.ts, piggyback)', async () => {
    const { c } = track(await connectRaw(`${t.wsUrl}?pi=1`));
    const id = pubsubId('piggyback');
    c.send({ command: 'subscribe', identifier: id });
    await c.waitFor((f) => f.type === 'confirm_subscription', 2000, 'confirm');
    // Frames of one TCP read are parsed in one go: a ping and the frame it rode with arrive together.
    const arrivals: { ping: boolean; at: number }[] = [];
    c.ws.on('message', (d) => arrivals.push({ ping: d.toString().startsWith('{"type":"ping"'), at: performance.now() }));
    for (let i = 0; i < 70; i++) {
      await t.broadcast({ stream: 'piggyback', data: JSON.stringify({ i }) });
      await sleepMs(50); // well inside the 330 ms a due ping waits at ?pi=1
    }
    const pings = arrivals.flatMap((a, i) => (a.ping ? [i] : []));
    expect(pings.length).toBeGreaterThanOrEqual(2);
    // each ping comes with a data frame of the same read (a slow publish may leave one alone):
    // ahead of it where the frame passes sendFrame, behind it where the frame was published to a
    // uWS topic (uWS writes a socket's published frames ahead of a send)
    const sameRead = (i: number, j: number) => arrivals[j] !== undefined && !arrivals[j]!.ping && Math.abs(arrivals[j]!.at - arrivals[i]!.at) < 1;
    const along = pings.filter((i) => sameRead(i, i + 1) || sameRead(i, i - 1));
    expect(along.length).toBeGreaterThanOrEqual(Math.max(2, pings.length - 1));
  });

  it('{"command":"ping"} → {"type":"pong"}; {"command":"pong"} is accepted silently', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    c.send({ command: 'pong' });
    c.send({ command: 'ping' });
    const [f] = await c.take(1);
    expect(f).toEqual({ type: 'pong' });
  });
});

describe('$pubsub subscriptions and broadcasts', () => {
  const secret = 's3cr3t';
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ streamsSecret: secret, broadcastKey: 'k' });
  });
  afterAll(() => t.close());

  it('confirms stream_name and delivers broadcasts with stream_id/epoch/offset from 1', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    const id = pubsubId('room/1');
    c.send({ command: 'subscribe', identifier: id });
    expect(c.raw.length).toBe(1);
    const [conf] = await c.take(1);
    expect(c.raw[1]).toBe(`{"type":"confirm_subscription","identifier":${JSON.stringify(id)}}`);
    expect(conf).toEqual({ type: 'confirm_subscription', identifier: id });
    expect((await t.broadcast({ stream: 'room/1', data: '{"text":"hi"}' }, 'k')).status).toBe(201);
    expect((await t.broadcast([{ stream: 'room/1', data: 'plain' }, { stream: 'other', data: '1' }], 'k')).status).toBe(201);
    const [m1, m2] = await c.take(2);
    const epoch = m1!.epoch as string;
    expect(typeof epoch).toBe('string');
    expect(m1).toEqual({ identifier: id, message: { text: 'hi' }, stream_id: 'room/1', epoch, offset: 1 });
    expect(m2).toEqual({ identifier: id, message: 'plain', stream_id: 'room/1', epoch, offset: 2 });
  });

  it('echoes the identifier byte for byte, whatever its spacing and key order', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    const id = '{ "stream_name" : "room/odd",\n "channel":"$pubsub" }';
    c.send({ command: 'subscribe', identifier: id });
    await c.take(1);
    expect(c.raw[1]).toBe(`{"type":"confirm_subscription","identifier":${JSON.stringify(id)}}`);
    await t.broadcast({ stream: 'room/odd', data: '[1,2]' }, 'k');
    const [m] = await c.take(1);
    expect(m!.identifier).toBe(id);
    expect(m!.message).toEqual([1, 2]);
  });

  it('accepts a valid signed_stream_name and rejects a forged one', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    const good = JSON.stringify({ channel: '$pubsub', signed_stream_name: signStreamName('secret/1', secret) });
    const bad = JSON.stringify({ channel: '$pubsub', signed_stream_name: signStreamName('secret/1', 'wrong') });
    c.send({ command: 'subscribe', identifier: good });
    c.send({ command: 'subscribe', identifier: bad });
    expect(await c.take(2)).toEqual([
      { type: 'confirm_subscription', identifier: good },
      { type: 'reject_subscription', identifier: bad },
    ]);
    await t.broadcast({ stream: 'secret/1', data: '{"n":1}' }, 'k');
    const [m] = await c.take(1);
    expect(m).toMatchObject({ identifier: good, message: { n: 1 }, stream_id: 'secret/1', offset: 1 });
  });

  it('rejects other channels, non-JSON identifiers and empty stream names', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    const ids = ['{"channel":"ChatChannel","id":42}', 'not json', '{"channel":"$pubsub","stream_name":""}', '{"channel":"$pubsub"}'];
    for (const identifier of ids) c.send({ command: 'subscribe', identifier });
    expect(await c.take(4)).toEqual(ids.map((identifier) => ({ type: 'reject_subscription', identifier })));
  });

  it('sends nothing for a duplicate subscribe (anycable-go) and nothing after unsubscribe', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    const id = pubsubId('room/dup');
    c.send({ command: 'subscribe', identifier: id });
    c.send({ command: 'subscribe', identifier: id });
    c.send({ command: 'ping' });
    expect(await c.take(2)).toEqual([{ type: 'confirm_subscription', identifier: id }, { type: 'pong' }]);
    c.send({ command: 'unsubscribe', identifier: id });
    c.send({ command: 'ping' });
    await c.take(1);
    await t.broadcast({ stream: 'room/dup', data: '1' }, 'k');
    c.send({ command: 'ping' });
    expect(await c.take(1)).toEqual([{ type: 'pong' }]);
  });

  it('meta.exclude_socket skips the connection with that sid', async () => {
    const a = track(await connectRaw(t.wsUrl));
    const b = track(await connectRaw(t.wsUrl));
    const id = pubsubId('room/ex');
    for (const x of [a, b]) {
      x.c.send({ command: 'subscribe', identifier: id });
      await x.c.take(1);
    }
    await t.broadcast({ stream: 'room/ex', data: '"x"', meta: { exclude_socket: a.welcome.sid } }, 'k');
    await t.broadcast({ stream: 'room/ex', data: '"y"' }, 'k');
    expect((await b.c.take(2)).map((f) => f.message)).toEqual(['x', 'y']);
    expect((await a.c.take(1)).map((f) => f.message)).toEqual(['y']);
  });

  it('whisper reaches the other subscribers, not the sender, without offsets', async () => {
    const a = track(await connectRaw(t.wsUrl));
    const b = track(await connectRaw(t.wsUrl));
    const id = pubsubId('chat/22');
    for (const x of [a, b]) {
      x.c.send({ command: 'subscribe', identifier: id });
      await x.c.take(1);
    }
    a.c.send({ command: 'whisper', identifier: id, data: { event: 'typing', user: 'Jack' } });
    const [w] = await b.c.take(1);
    expect(b.c.raw.at(-1)).toBe(`{"identifier":${JSON.stringify(id)},"message":{"event":"typing","user":"Jack"}}`);
    expect(w).toEqual({ identifier: id, message: { event: 'typing', user: 'Jack' } });
    a.c.send({ command: 'ping' });
    expect(await a.c.take(1)).toEqual([{ type: 'pong' }]);
  });

  it('message commands on $pubsub are ignored; presence commands get a presence error', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    const id = pubsubId('room/p');
    c.send({ command: 'subscribe', identifier: id });
    await c.take(1);
    c.send({ command: 'message', identifier: id, data: '{"action":"speak"}' });
    c.send({ command: 'join', identifier: id, presence: { id: '1' } });
    expect(await c.take(1)).toEqual([{ type: 'presence', identifier: id, message: { type: 'error' } }]);
  });

  it('POST /publish-local: the server emits the sequence itself, as ordinary stored broadcasts', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    c.send({ command: 'subscribe', identifier: pubsubId('local/1') });
    await c.take(1);
    const r = await fetch(`${t.httpUrl}/publish-local`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: JSON.stringify({ stream: 'local/1', count: 3, intervalMs: 5 }) });
    expect(r.status).toBe(202);
    const got = await c.take(3);
    expect(got.map((f) => [f.offset, (f.message as { seq: number }).seq])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
  });

  it('HTTP: bearer key required (401), non-string data 422, unreadable body 400, array 201', async () => {
    expect((await t.broadcast({ stream: 's', data: 'x' })).status).toBe(401);
    expect((await t.broadcast({ stream: 's', data: 'x' }, 'wrong')).status).toBe(401);
    const r422 = await t.broadcast({ stream: 's', data: { a: 1 } }, 'k');
    expect(r422.status).toBe(422);
    expect(await r422.json()).toMatchObject({ statusCode: 422, code: 'RR_ERR_BROADCAST_INVALID' });
    expect((await t.broadcast('{nope', 'k')).status).toBe(400);
    expect((await t.broadcast([{ stream: 's', data: '1' }, { stream: 's', data: '2' }], 'k')).status).toBe(201);
    const metrics = (await (await fetch(`${t.httpUrl}/metrics`)).json()) as Record<string, unknown>;
    expect(metrics).toMatchObject({ service: 'replay' });
    expect(metrics).toHaveProperty('connections');
    expect(metrics).toHaveProperty('subscriptions');
    expect(metrics).toHaveProperty('streams');
    expect(await (await fetch(`${t.httpUrl}/health`)).json()).toEqual({ status: 'ok', service: 'replay' });
  });
});

describe('public streams switched off', () => {
  it('rejects stream_name', async () => {
    const t = await startTestServer({ publicStreams: false });
    try {
      const { c } = track(await connectRaw(t.wsUrl));
      c.send({ command: 'subscribe', identifier: pubsubId('a') });
      expect(await c.take(1)).toEqual([{ type: 'reject_subscription', identifier: pubsubId('a') }]);
    } finally {
      await t.close();
    }
  });
});

describe('history', () => {
  let t: TestServer;
  const id = pubsubId('h/1');
  beforeAll(async () => {
    t = await startTestServer({ historyLimit: 5 });
    for (let i = 1; i <= 8; i++) await t.broadcast({ stream: 'h/1', data: JSON.stringify({ n: i }) });
  });
  afterAll(() => t.close());

  const subscribed = async () => {
    const x = track(await connectRaw(t.wsUrl));
    x.c.send({ command: 'subscribe', identifier: id });
    await x.c.take(1);
    return x.c;
  };
  const epochOf = async () => {
    const c = await subscribed();
    c.send({ command: 'history', identifier: id, history: { since: 1 } });
    const [f] = await c.take(1);
    return f!.epoch as string;
  };

  it('by offset: backlog after the offset, then confirm_history', async () => {
    const epoch = await epochOf();
    const c = await subscribed();
    c.send({ command: 'history', identifier: id, history: { streams: { 'h/1': { epoch, offset: 5 } } } });
    const got = await c.take(4);
    expect(got.slice(0, 3).map((f) => [f.offset, f.message])).toEqual([
      [6, { n: 6 }],
      [7, { n: 7 }],
      [8, { n: 8 }],
    ]);
    expect(got[0]).toEqual({ identifier: id, message: { n: 6 }, stream_id: 'h/1', epoch, offset: 6 });
    expect(got[3]).toEqual({ type: 'confirm_history', identifier: id });
  });

  it('by since (unix seconds): every retained message, then confirm_history', async () => {
    const c = await subscribed();
    c.send({ command: 'history', identifier: id, history: { since: Math.floor(Date.now() / 1000) - 60 } });
    const got = await c.take(6);
    expect(got.slice(0, 5).map((f) => f.offset)).toEqual([4, 5, 6, 7, 8]);
    expect(got[5]!.type).toBe('confirm_history');
  });

  it('offset == latest: confirm_history with an empty backlog', async () => {
    const epoch = await epochOf();
    const c = await subscribed();
    c.send({ command: 'history', identifier: id, history: { streams: { 'h/1': { epoch, offset: 8 } } } });
    expect(await c.take(1)).toEqual([{ type: 'confirm_history', identifier: id }]);
  });

  it('only reject_history for unknown epoch, evicted offset, offset ahead, bogus position, no since', async () => {
    const epoch = await epochOf();
    const c = await subscribed();
    const bad = [
      { streams: { 'h/1': { epoch: 'nope', offset: 6 } } },
      { streams: { 'h/1': { epoch, offset: 2 } } }, // 3 was evicted (limit 5 keeps 4..8)
      { streams: { 'h/1': { epoch, offset: 9 } } },
      { streams: { 'h/1': { epoch, offset: -1 } } },
      { streams: { 'h/1': { epoch, offset: '6' } } },
      { streams: {} },
      'nonsense',
    ];
    for (const history of bad) c.send({ command: 'history', identifier: id, history });
    expect(await c.take(bad.length)).toEqual(bad.map(() => expect.objectContaining({ type: 'reject_history', identifier: id })));
    // One at a time (repeats waiting behind a running request coalesce into the last one's answer):
    // the broker's cause rides along where there is one, an extra field clients ignore.
    const reasons: unknown[] = [];
    for (const history of bad.slice(0, 3)) {
      c.send({ command: 'history', identifier: id, history });
      reasons.push((await c.take(1))[0]!.reason);
    }
    expect(reasons).toEqual(['unknown_epoch', 'offset_evicted', 'offset_ahead']);
  });

  it('offset one below the retained window is still served (gap-free)', async () => {
    const epoch = await epochOf();
    const c = await subscribed();
    c.send({ command: 'history', identifier: id, history: { streams: { 'h/1': { epoch, offset: 3 } } } });
    const got = await c.take(6);
    expect(got.map((f) => f.offset ?? f.type)).toEqual([4, 5, 6, 7, 8, 'confirm_history']);
  });

  it('history for a stream never published to: reject by offset, empty confirm by since', async () => {
    const c = track(await connectRaw(t.wsUrl)).c;
    const other = pubsubId('h/none');
    c.send({ command: 'subscribe', identifier: other });
    await c.take(1);
    c.send({ command: 'history', identifier: other, history: { streams: { 'h/none': { epoch: 'x', offset: 1 } } } });
    c.send({ command: 'history', identifier: other, history: { since: 1 } });
    expect(await c.take(2)).toEqual([
      { type: 'reject_history', identifier: other, reason: 'stream_not_found' },
      { type: 'confirm_history', identifier: other },
    ]);
  });

  it('history without a subscription: reject_history', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    c.send({ command: 'history', identifier: id, history: { since: 1 } });
    expect(await c.take(1)).toEqual([{ type: 'reject_history', identifier: id }]);
  });

  it('subscribe with history: confirm_subscription, backlog, confirm_history', async () => {
    const epoch = await epochOf();
    const { c } = track(await connectRaw(t.wsUrl));
    c.send({ command: 'subscribe', identifier: id, history: { since: 1, streams: { 'h/1': { epoch, offset: 7 } } } });
    const got = await c.take(3);
    expect(got.map((f) => f.type ?? f.offset)).toEqual(['confirm_subscription', 8, 'confirm_history']);
  });

  it('rejected subscribe with history: only reject_subscription', async () => {
    const { c } = track(await connectRaw(t.wsUrl));
    const bad = '{"channel":"Nope"}';
    c.send({ command: 'subscribe', identifier: bad, history: { since: 1 } });
    c.send({ command: 'ping' });
    expect(await c.take(2)).toEqual([{ type: 'reject_subscription', identifier: bad }, { type: 'pong' }]);
  });
});

/** A broker whose history reads take `delayMs`, so live broadcasts land during the replay. */
function slowHistoryBroker(inner: MemoryBroker, delayMs: number): Broker {
  return {
    kind: 'slow',
    publish: (items) => inner.publish(items),
    onMessages: (l) => inner.onMessages(l),
    history: async (stream: string, pos: HistoryPosition) => {
      const res = inner.historySync(stream, pos); // snapshot now, answer later
      await sleepMs(delayMs);
      return res;
    },
    commitSession: (sid, s) => inner.commitSession(sid, s),
    updateSession: (sid, c) => inner.updateSession(sid, c),
    restoreSession: (sid) => inner.restoreSession(sid),
    stats: () => inner.stats(),
    close: () => inner.close(),
  };
}

describe('history/live boundary: each offset exactly once, in order', () => {
  it('live frames during an in-flight replay are held and flushed above the replayed offset', async () => {
    const inner = new MemoryBroker({ historyLimit: 100, historyTtlSec: 300, sessionTtlSec: 300 });
    const t = await startTestServer({}, { broker: slowHistoryBroker(inner, 150) });
    try {
      for (let i = 1; i <= 5; i++) await t.broadcast({ stream: 'b/1', data: JSON.stringify({ n: i }) });
      const first = (await inner.history('b/1', { since: 1 })) as { ok: true; messages: { epoch?: string }[] };
      const { c } = track(await connectRaw(t.wsUrl));
      const id = pubsubId('b/1');
      c.send({ command: 'subscribe', identifier: id, history: { streams: { 'b/1': { epoch: first.messages[0]!.epoch, offset: 2 } } } });
      await c.take(1);
      // 6..9 are published while the (snapshot 3..5) replay is in flight.
      for (let i = 6; i <= 9; i++) await t.broadcast({ stream: 'b/1', data: JSON.stringify({ n: i }) });
      const got = await c.take(8);
      expect(got.map((f) => f.offset ?? f.type)).toEqual([3, 4, 5, 'confirm_history', 6, 7, 8, 9]);
      await t.broadcast({ stream: 'b/1', data: '{"n":10}' });
      expect((await c.take(1))[0]!.offset).toBe(10);
    } finally {
      await t.close();
    }
  });

  it('a history request overlapping delivered offsets does not repeat them', async () => {
    const t = await startTestServer();
    try {
      const { c } = track(await connectRaw(t.wsUrl));
      const id = pubsubId('b/2');
      c.send({ command: 'subscribe', identifier: id });
      await c.take(1);
      for (let i = 1; i <= 4; i++) await t.broadcast({ stream: 'b/2', data: String(i) });
      const live = await c.take(4);
      c.send({ command: 'history', identifier: id, history: { streams: { 'b/2': { epoch: live[0]!.epoch, offset: 1 } } } });
      expect(await c.take(1)).toEqual([{ type: 'confirm_history', identifier: id }]);
    } finally {
      await t.close();
    }
  });
});

describe('session restore', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ sessionTtlSec: 2 });
  });
  afterAll(() => t.close());

  const session = async (url = t.wsUrl, stream = 'r/1') => {
    const x = track(await connectRaw(url));
    x.c.send({ command: 'subscribe', identifier: pubsubId(stream) });
    await x.c.take(1);
    return x;
  };

  it('?sid= restores: new sid, restored:true, restored_ids, subscriptions kept server-side', async () => {
    const a = await session();
    await t.broadcast({ stream: 'r/1', data: '{"n":1}' });
    const [m1] = await a.c.take(1);
    a.c.close();
    await sleepMs(50);
    await t.broadcast({ stream: 'r/1', data: '{"n":2}' }); // missed while offline
    const b = track(await connectRaw(`${t.wsUrl}?sid=${a.welcome.sid}`));
    expect(b.welcome).toEqual({ type: 'welcome', sid: b.welcome.sid, restored: true, restored_ids: [pubsubId('r/1')] });
    expect(b.welcome.sid).not.toBe(a.welcome.sid);
    await t.broadcast({ stream: 'r/1', data: '{"n":3}' }); // live, parked until the history command
    await sleepMs(50);
    expect(b.c.drain()).toEqual([]);
    b.c.send({ command: 'history', identifier: pubsubId('r/1'), history: { since: 1, streams: { 'r/1': { epoch: m1!.epoch, offset: 1 } } } });
    const got = await b.c.take(3);
    // 3 was stored before the history read, so it is part of the backlog and not repeated live.
    expect(got.map((f) => f.offset ?? f.type)).toEqual([2, 3, 'confirm_history']);
    await t.broadcast({ stream: 'r/1', data: '{"n":4}' });
    expect((await b.c.take(1))[0]!.offset).toBe(4);
    // and the restored session can itself be restored
    b.c.close();
    await sleepMs(50);
    const c2 = track(await connectRaw(`${t.wsUrl}?sid=${b.welcome.sid}`));
    expect(c2.welcome.restored).toBe(true);
  });

  it('a restored subscription releases parked frames when no history command comes (restoreHoldMs)', async () => {
    const t2 = await startTestServer({ restoreHoldMs: 200 });
    try {
      const a = track(await connectRaw(t2.wsUrl));
      a.c.send({ command: 'subscribe', identifier: pubsubId('r/hold') });
      await a.c.take(1);
      a.c.close();
      await sleepMs(50);
      const b = track(await connectRaw(`${t2.wsUrl}?sid=${a.welcome.sid}`));
      expect(b.welcome.restored).toBe(true);
      await t2.broadcast({ stream: 'r/hold', data: '{"n":1}' });
      await sleepMs(80);
      expect(b.c.drain()).toEqual([]);
      const [m] = await b.c.take(1, 1000);
      expect(m).toMatchObject({ offset: 1, message: { n: 1 } });
    } finally {
      await t2.close();
    }
  });

  it('X-ANYCABLE-RESTORE-SID header restores too', async () => {
    const a = await session(t.wsUrl, 'r/h');
    a.c.close();
    await sleepMs(50);
    const b = track(await connectRaw(t.wsUrl, undefined, { headers: { 'X-ANYCABLE-RESTORE-SID': a.welcome.sid as string } }));
    expect(b.welcome.restored_ids).toEqual([pubsubId('r/h')]);
  });

  it('unknown, empty or base-protocol sids get a plain welcome', async () => {
    const a = await session(t.wsUrl, 'r/x');
    for (const [url, proto] of [
      [`${t.wsUrl}?sid=unknown`, EXT],
      [`${t.wsUrl}?sid=`, EXT],
      [`${t.wsUrl}?sid=${a.welcome.sid}`, BASE],
    ] as const) {
      const b = track(await connectRaw(url, proto));
      expect(Object.keys(b.welcome)).toEqual(['type', 'sid']);
    }
  });

  it('sessions expire after the TTL', async () => {
    const a = await session(t.wsUrl, 'r/ttl');
    a.c.close();
    await sleepMs(2200);
    const b = track(await connectRaw(`${t.wsUrl}?sid=${a.welcome.sid}`));
    expect(b.welcome.restored).toBeUndefined();
  });
});

describe('disconnect frames', () => {
  it('unauthorized: {"type":"disconnect","reason":"unauthorized","reconnect":false}, then close', async () => {
    const t = await startTestServer({ accessToken: 'tok' });
    try {
      const { c, welcome } = track(await connectRaw(t.wsUrl));
      expect(c.raw[0]).toBe('{"type":"disconnect","reason":"unauthorized","reconnect":false}');
      expect(welcome.reason).toBe('unauthorized');
      expect((await c.waitClosed()).code).toBe(1008);
      const ok = track(await connectRaw(`${t.wsUrl}?jid=tok`));
      expect(ok.welcome.type).toBe('welcome');
    } finally {
      await t.close();
    }
  });

  it('server_restart on graceful stop (reconnect true) to every client', async () => {
    const t = await startTestServer();
    const xs = await Promise.all([1, 2, 3].map(() => connectRaw(t.wsUrl)));
    xs.forEach(track);
    await t.close();
    for (const x of xs) {
      // uWS runs its close handler as the goodbye is written, so stop() may return before the
      // client read it: what every client must see is the goodbye last, before the close.
      await x.c.waitClosed();
      expect(x.c.raw.at(-1)).toBe('{"type":"disconnect","reason":"server_restart","reconnect":true}');
    }
  });

  it('too_slow: a consumer that stops reading is cut off and the buffer stays bounded', async () => {
    // Output beyond the socket buffer waits in a queue of at most maxQueuedBytes (>= 2 x maxBodyBytes).
    const t = await startTestServer({ maxBufferedBytes: 64 * 1024, maxBodyBytes: 512 * 1024, maxQueuedBytes: 1024 * 1024 });
    try {
      const { c } = track(await connectRaw(t.wsUrl));
      c.send({ command: 'subscribe', identifier: pubsubId('slow') });
      await c.take(1);
      (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      const big = JSON.stringify('x'.repeat(256 * 1024));
      for (let i = 0; i < 60 && t.srv.counters.disconnects.too_slow === 0; i++) await t.broadcast({ stream: 'slow', data: big });
      expect(t.srv.counters.disconnects.too_slow).toBe(1);
      await sleepMs(1200);
      expect(t.srv.connectionCount()).toBe(0);
    } finally {
      await t.close();
    }
  });
});
