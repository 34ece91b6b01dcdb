/**
 * The Socket.IO reference stacks on Redis, as real processes behind a real redis-server:
 * `--adapter redis` (default mode: @socket.io/redis-adapter; csr: @socket.io/redis-streams-adapter).
 */
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { io, type Socket as IoClientSocket } from 'socket.io-client';
import { waitUntil } from '../../lib/time.ts';
import { startTestRedis, type TestRedis } from '../common/redis-testing.ts';
import { startService, type ServiceHandle } from '../common/spawn.ts';
import { broadcast, ioClient, metrics } from '../common/test-clients.ts';

let redis: TestRedis;
const handles: ServiceHandle[] = [];
const sockets: IoClientSocket[] = [];
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  for (const h of handles.splice(0)) await h.kill();
});

async function nodes(mode: 'default' | 'csr'): Promise<[ServiceHandle, ServiceHandle]> {
  const start = () => startService('socketio', { args: ['--mode', mode, '--adapter', 'redis', '--redis-url', redis.url] });
  const pair = await Promise.all([start(), start()]);
  handles.push(...pair);
  return pair;
}

describe('socketio on Redis', () => {
  it('default mode + redis-adapter: publish on node B reaches a subscriber on node A (both conventions)', async () => {
    const [a, b] = await nodes('default');
    const c = await ioClient(a);
    sockets.push(c.socket);
    const got: unknown[] = [];
    c.socket.on('message', (m: unknown) => got.push(m));
    expect(await c.socket.timeout(5000).emitWithAck('subscribe', 'x/1')).toEqual({ ok: true });
    // The benchmark's convention on the same stream: `join` (acked here) and object payloads.
    const bench = await ioClient(a);
    sockets.push(bench.socket);
    const objects: unknown[] = [];
    bench.socket.on('message', (m: unknown) => objects.push(m));
    expect(await bench.socket.timeout(5000).emitWithAck('join', 'x/1')).toEqual({ ok: true });
    for (let i = 1; i <= 3; i++) expect((await broadcast(b, { stream: 'x/1', data: JSON.stringify({ i }) })).status).toBe(201);
    await waitUntil(() => got.length >= 3, 5000, 'three messages across nodes');
    expect(got).toEqual([1, 2, 3].map((i) => JSON.stringify({ i })));
    await waitUntil(() => objects.length >= 3, 5000, 'three objects across nodes');
    expect(objects).toEqual([1, 2, 3].map((i) => ({ i })));
    expect(await metrics(a)).toMatchObject({ service: 'socketio-default-redis', adapter: 'redis' });
  });

  it('csr + redis-streams-adapter: a client that drops on node A recovers on node B with what it missed', async () => {
    const [a, b] = await nodes('csr');
    const socket = io(a.httpUrl, { transports: ['websocket'], reconnectionDelay: 400, reconnectionDelayMax: 400, forceNew: true });
    sockets.push(socket);
    const got: string[] = [];
    const recovered: boolean[] = [];
    socket.on('connect', () => recovered.push(socket.recovered));
    socket.on('message', (m: string) => got.push(m));
    await waitUntil(() => recovered.length === 1, 5000, 'connect');
    expect(await socket.timeout(5000).emitWithAck('subscribe', 'r/1')).toEqual({ ok: true });
    for (let i = 1; i <= 3; i++) await broadcast(b, { stream: 'r/1', data: String(i) });
    await waitUntil(() => got.length >= 3, 5000, 'three live messages');
    // The "load balancer" sends the reconnect to node B; the transport drops (not a clean leave).
    (socket.io as unknown as { uri: string }).uri = b.httpUrl;
    socket.io.engine.close();
    await waitUntil(() => socket.disconnected, 3000, 'disconnect');
    for (let i = 4; i <= 6; i++) await broadcast(b, { stream: 'r/1', data: String(i) });
    await waitUntil(() => recovered.length === 2 && got.length >= 6, 8000, 'recovered on B');
    expect(recovered).toEqual([false, true]);
    expect(got).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('Redis unreachable at start: a coded error and a non-zero exit', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'services/socketio/main.ts', '--adapter', 'redis', '--redis-url', 'redis://127.0.0.1:1', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).not.toBe(0);
    expect(err).toContain('RR_ERR_REDIS_UNAVAILABLE');
  });
});
