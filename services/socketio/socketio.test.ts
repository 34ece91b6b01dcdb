/**
 * Socket.IO reference server on real processes (port 0), real socket.io-client over loopback:
 * both client conventions (the benchmark's `join` + object payloads, Rebound's `subscribe` +
 * strings), whispers, `meta.exclude_socket`, and the bounds shared with the replay server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io, type Socket as IoClientSocket } from 'socket.io-client';
import { waitUntil } from '../../lib/time.ts';
import { startService, type ServiceHandle } from '../common/spawn.ts';
import { describeSharedBounds } from '../common/reference-contract.ts';
import { broadcast, ioClient, metrics } from '../common/test-clients.ts';

const svcs: Record<string, ServiceHandle> = {};

/**
 * `join` has no ack. The server handles one socket's events in order, so the ack of any later
 * event (an unknown one is ignored; here an unsubscribe of nothing) proves the join was applied.
 */
const joined = (s: IoClientSocket) => s.timeout(5000).emitWithAck('unsubscribe', '\u0001barrier');
beforeAll(async () => {
  const [d, c] = await Promise.all([startService('socketio', { args: ['--mode', 'default'] }), startService('socketio', { args: ['--mode', 'csr'] })]);
  Object.assign(svcs, { default: d, csr: c });
});
afterAll(async () => {
  await Promise.all(Object.values(svcs).map((s) => s.stop()));
});

describe.each(['default', 'csr'])('socketio %s', (mode) => {
  const svc = () => svcs[mode]!;

  it("the benchmark's own client works by changing only the URL: emit join (no ack), message payloads are objects", async () => {
    // Written the way nodejs-websocket-bench's Socket.IO client is: websocket transport, join on connect, listen on message.
    const got: unknown[] = [];
    const bench = io(svc().httpUrl, { transports: ['websocket'], reconnection: false, forceNew: true });
    bench.on('connect', () => bench.emit('join', 'bench-conv'));
    bench.on('message', (m: unknown) => got.push(m));
    // Rebound's adapter convention on the same stream, at the same time.
    const ours = await ioClient(svc());
    const strings: unknown[] = [];
    ours.socket.on('message', (m: unknown) => strings.push(m));
    expect(await ours.socket.timeout(5000).emitWithAck('subscribe', 'bench-conv')).toEqual({ ok: true });
    await waitUntil(() => bench.connected, 5000, 'bench client connected');
    await joined(bench);
    const sentAt = Date.now();
    for (let seq = 1; seq <= 3; seq++) expect((await broadcast(svc(), { stream: 'bench-conv', data: JSON.stringify({ seq, sentAt, text: `msg_${seq}` }) })).status).toBe(201);
    await waitUntil(() => got.length >= 3 && strings.length >= 3, 5000, 'three messages each');
    expect(got).toEqual([1, 2, 3].map((seq) => ({ seq, sentAt, text: `msg_${seq}` })));
    expect(strings).toEqual([1, 2, 3].map((seq) => JSON.stringify({ seq, sentAt, text: `msg_${seq}` })));
    // data that is not JSON still reaches a join client, as the string it is.
    await broadcast(svc(), { stream: 'bench-conv', data: 'not json' });
    await waitUntil(() => got.length >= 4, 5000, 'non-JSON data');
    expect(got[3]).toBe('not json');
    bench.close();
    ours.close();
  });

  it("the benchmark's /publish-local?total&interval&stream (empty body) reaches its client as {seq, sentAt, text} objects", async () => {
    const got: Array<{ seq: number; sentAt: number; text: string }> = [];
    const bench = io(svc().httpUrl, { transports: ['websocket'], reconnection: false, forceNew: true });
    bench.on('connect', () => bench.emit('join', 'bench-local'));
    bench.on('message', (m: { seq: number; sentAt: number; text: string }) => got.push(m));
    await waitUntil(() => bench.connected, 5000, 'bench client connected');
    await joined(bench);
    const res = await fetch(`${svc().httpUrl}/publish-local?total=3&interval=1&stream=bench-local`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ status: 'publishing-local', scheduled: 3, stream: 'bench-local', intervalMs: 1 });
    await waitUntil(() => got.length >= 3, 5000, 'three local messages');
    expect(got.map((m) => [m.seq, typeof m.sentAt, m.text])).toEqual([1, 2, 3].map((n) => [n, 'number', `msg_${n}`]));
    bench.close();
  });

  it('whisper (room, payload) reaches the other members of the room, not the sender, and only from a member', async () => {
    const [a, b, c, outsider] = await Promise.all([ioClient(svc()), ioClient(svc()), ioClient(svc()), ioClient(svc())]);
    const heard = new Map<string, unknown[]>();
    for (const [name, cl] of Object.entries({ a, b, c, outsider })) {
      heard.set(name, []);
      cl.socket.on('whisper', (p: unknown) => heard.get(name)!.push(p));
    }
    await a.socket.timeout(5000).emitWithAck('join', 'wroom');
    await b.socket.timeout(5000).emitWithAck('subscribe', 'wroom');
    await c.socket.timeout(5000).emitWithAck('join', 'wroom');
    a.socket.emit('whisper', 'wroom', { sentAt: 1, from: 'a', pad: 'x' });
    outsider.socket.emit('whisper', 'wroom', { from: 'outsider' });
    await waitUntil(() => heard.get('b')!.length >= 1 && heard.get('c')!.length >= 1, 5000, 'whispers');
    await new Promise((r) => setTimeout(r, 200));
    expect(heard.get('b')).toEqual([{ sentAt: 1, from: 'a', pad: 'x' }]);
    expect(heard.get('c')).toEqual([{ sentAt: 1, from: 'a', pad: 'x' }]);
    expect(heard.get('a')).toEqual([]);
    expect(heard.get('outsider')).toEqual([]);
    for (const cl of [a, b, c, outsider]) cl.close();
  });

  it('meta.exclude_socket (the Socket.IO socket id) skips that socket only', async () => {
    const [a, b] = await Promise.all([ioClient(svc()), ioClient(svc())]);
    const got = { a: [] as unknown[], b: [] as unknown[] };
    a.socket.on('message', (m: unknown) => got.a.push(m));
    b.socket.on('message', (m: unknown) => got.b.push(m));
    await a.socket.timeout(5000).emitWithAck('subscribe', 'excl');
    await b.socket.timeout(5000).emitWithAck('join', 'excl');
    expect((await broadcast(svc(), [{ stream: 'excl', data: '1', meta: { exclude_socket: a.socket.id } }, { stream: 'excl', data: '2', meta: { exclude_socket: b.socket.id } }, { stream: 'excl', data: '3' }])).status).toBe(201);
    await waitUntil(() => got.a.length >= 2 && got.b.length >= 2, 5000, 'deliveries');
    await new Promise((r) => setTimeout(r, 100));
    expect(got.a).toEqual(['2', '3']);
    expect(got.b).toEqual([1, 3]);
    a.close();
    b.close();
  });
});

describe('socketio bounds (same defaults as the replay server; lowered here)', () => {
  let svc: ServiceHandle;
  beforeAll(async () => {
    svc = await startService('socketio', { args: ['--max-buffered-bytes', '65536', '--max-subscriptions', '3', '--max-stream-length', '16'] });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('rooms per socket and room-name length are bounded', async () => {
    const c = await ioClient(svc);
    for (const s of ['r1', 'r2', 'r3']) expect(await c.socket.timeout(5000).emitWithAck('subscribe', s)).toEqual({ ok: true });
    expect(await c.socket.timeout(5000).emitWithAck('subscribe', 'r4')).toEqual({ ok: false, reason: 'too_many_subscriptions' });
    expect(await c.socket.timeout(5000).emitWithAck('join', 'r5')).toEqual({ ok: false, reason: 'too_many_subscriptions' });
    expect(await c.socket.timeout(5000).emitWithAck('subscribe', 'r1')).toEqual({ ok: true });
    const d = await ioClient(svc);
    expect(await d.socket.timeout(5000).emitWithAck('subscribe', 'x'.repeat(17))).toEqual({ ok: false, reason: 'invalid_stream' });
    expect((await metrics(svc)).refusedSubscriptions).toBe(2);
    c.close();
    d.close();
  });

  it('a client that stops reading is dropped as too slow; a reading one gets everything', async () => {
    const [slow, fast] = await Promise.all([ioClient(svc), ioClient(svc)]);
    let fastGot = 0;
    fast.socket.on('message', () => fastGot++);
    await slow.socket.timeout(5000).emitWithAck('subscribe', 'slow');
    await fast.socket.timeout(5000).emitWithAck('subscribe', 'slow');
    slow.pause();
    const data = 'z'.repeat(50_000);
    // 200 x 50 KB = 10 MB: far past kernel socket buffers, so the server itself must hold or drop.
    for (let p = 0; p < 20; p++) expect((await broadcast(svc, Array.from({ length: 10 }, () => ({ stream: 'slow', data })))).status).toBe(201);
    await waitUntil(() => fastGot >= 200, 10_000, 'fast reader got all 200');
    const m = await metrics(svc);
    expect(m.tooSlowDisconnects).toBe(1);
    expect(m.connections).toBe(1);
    fast.close();
    slow.close();
  });
});

// The stop and too-slow rules shared with the ws server; the stop test runs the CSR mode.
describeSharedBounds('socketio', { stopArgs: ['--mode', 'csr'] });
