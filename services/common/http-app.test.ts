import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { io } from 'socket.io-client';
import { uwsAvailability } from '../uws/load.ts';
import { startService, type ServiceHandle } from './spawn.ts';
import { waitUntil } from '../../lib/time.ts';

/**
 * The HTTP edge every reference service shares, exercised on real processes on port 0:
 * a 201 always means delivered; anything else is a precise status with one error body shape.
 */
const KEY = 'test-key-123';
// uWS's own HTTP carries the same routes (services/uws/http.ts) where its binary loads.
const UWS = uwsAvailability().available;
const services: Record<string, ServiceHandle> = {};

beforeAll(async () => {
  const [ws, uws, sio, csr] = await Promise.all([
    startService('ws', { env: { BROADCAST_KEY: KEY } }),
    UWS ? startService('uws', { env: { BROADCAST_KEY: KEY } }) : undefined,
    startService('socketio', { args: ['--mode', 'default'], env: { BROADCAST_KEY: KEY } }),
    startService('socketio', { args: ['--mode', 'csr'], env: { BROADCAST_KEY: KEY } }),
  ]);
  Object.assign(services, { ws, socketio: sio, 'socketio-csr': csr }, uws ? { uws } : {});
});
afterAll(async () => {
  await Promise.all(Object.values(services).map((s) => s.stop()));
});

const post = (svc: ServiceHandle, body: string, headers: Record<string, string> = { authorization: `Bearer ${KEY}` }, path = '/_broadcast') =>
  fetch(svc.httpUrl + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

describe.each(['ws', ...(UWS ? ['uws'] : []), 'socketio', 'socketio-csr'])('%s service HTTP edge', (name) => {
  const svc = () => services[name]!;

  it('GET /health and /metrics report the process', async () => {
    expect(await (await fetch(svc().httpUrl + '/health')).json()).toMatchObject({ status: 'ok' });
    const m = await (await fetch(svc().httpUrl + '/metrics')).json();
    expect(m).toMatchObject({ connections: expect.any(Number), subscriptions: expect.any(Number), rssBytes: expect.any(Number), cpuPct: expect.any(Number), uptimeSec: expect.any(Number) });
    expect(m.eventLoopLagMs).toMatchObject({ p99: expect.any(Number), max: expect.any(Number) });
    expect(m.limits).toMatchObject({ maxBufferedBytes: 1_048_576, maxSubscriptions: 256, maxStreamLength: 1024 });
    expect(JSON.stringify(m)).not.toContain(KEY);
  });

  it.each([
    ['no token', '{"stream":"s","data":"x"}', {}, 401, 'RR_ERR_AUTH_MISSING'],
    ['wrong token', '{"stream":"s","data":"x"}', { authorization: 'Bearer nope' }, 401, 'RR_ERR_AUTH_INVALID'],
    ['not JSON', '{"stream":', undefined, 400, 'RR_ERR_BODY_UNREADABLE'],
    ['empty body', '', undefined, 400, 'RR_ERR_BODY_UNREADABLE'],
    ['data not a string', '{"stream":"s","data":{"a":1}}', undefined, 422, 'RR_ERR_BROADCAST_INVALID'],
    ['missing stream', '{"data":"x"}', undefined, 422, 'RR_ERR_BROADCAST_INVALID'],
    ['null item', 'null', undefined, 422, 'RR_ERR_BROADCAST_INVALID'],
    ['empty array', '[]', undefined, 422, 'RR_ERR_BROADCAST_INVALID'],
    ['one bad item in a batch', '[{"stream":"s","data":"ok"},{"stream":"s","data":5}]', undefined, 422, 'RR_ERR_BROADCAST_INVALID'],
    ['bad meta', '{"stream":"s","data":"x","meta":{"exclude_socket":5}}', undefined, 422, 'RR_ERR_BROADCAST_INVALID'],
    ['Content-Encoding: compress', '{"stream":"s","data":"x"}', { authorization: `Bearer ${KEY}`, 'content-encoding': 'compress' }, 415, 'RR_ERR_UNSUPPORTED_ENCODING'],
    ['gzip header on a plain body', '{"stream":"s","data":"x"}', { authorization: `Bearer ${KEY}`, 'content-encoding': 'gzip' }, 400, 'RR_ERR_BODY_UNREADABLE'],
  ])('%s → %i %s', async (_label, body, headers, status, code) => {
    const res = await post(svc(), body, headers as Record<string, string> | undefined);
    expect(res.status).toBe(status);
    const json = await res.json();
    expect(json).toMatchObject({ statusCode: status, code, error: expect.any(String), message: expect.any(String) });
    expect(json).not.toHaveProperty('stack');
  });

  it('a gzip-encoded body is decoded and accepted', async () => {
    const res = await post(svc(), gzipSync('{"stream":"gz","data":"x"}') as unknown as string, { authorization: `Bearer ${KEY}`, 'content-encoding': 'gzip' });
    expect(res.status).toBe(201);
  });

  it('unknown routes are 404 with the same body shape', async () => {
    const res = await fetch(svc().httpUrl + '/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'RR_ERR_NOT_FOUND' });
  });

  it('publish-local validates its plan', async () => {
    const res = await post(svc(), '{"stream":"s","count":-1}', undefined, '/publish-local');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
  });
});

/** Subscribe one real client to `stream` on the service and collect its data strings. */
async function subscriber(name: string, stream: string) {
  const got: string[] = [];
  const svc = services[name]!;
  if (name === 'ws' || name === 'uws') {
    const ws = new WebSocket(svc.httpUrl.replace('http', 'ws') + '/ws');
    await new Promise<void>((resolve) => {
      ws.on('open', () => ws.send(JSON.stringify({ type: 'subscribe', stream })));
      ws.on('message', (raw) => {
        const m = JSON.parse(raw.toString());
        if (m.type === 'subscribed') resolve();
        else if (typeof m.data === 'string') got.push(m.data);
      });
    });
    return { got, close: () => ws.close() };
  }
  const s = io(svc.httpUrl, { transports: ['websocket'], forceNew: true });
  s.on('message', (d: string) => got.push(d));
  await s.timeout(5000).emitWithAck('subscribe', stream);
  return { got, close: () => s.close() };
}

describe.each(['ws', ...(UWS ? ['uws'] : []), 'socketio', 'socketio-csr'])('%s service delivery', (name) => {
  it('201 means every message of a batch reached the subscriber, in order; a rejected batch delivers nothing', async () => {
    const sub = await subscriber(name, 'room-1');
    const bad = await post(services[name]!, JSON.stringify([{ stream: 'room-1', data: 'never' }, { stream: 'room-1' }]));
    expect(bad.status).toBe(422);
    const ok = await post(services[name]!, JSON.stringify([{ stream: 'room-1', data: 'a' }, { stream: 'room-1', data: 'b' }, { stream: 'other', data: 'c' }]));
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ accepted: 3 });
    await waitUntil(() => sub.got.length >= 2, 5000, 'two messages');
    expect(sub.got).toEqual(['a', 'b']);
    const local = await post(services[name]!, JSON.stringify({ stream: 'room-1', count: 3, intervalMs: 1, runId: 'r' }), undefined, '/publish-local');
    expect(local.status).toBe(202);
    await waitUntil(() => sub.got.length >= 5, 5000, 'publish-local messages');
    expect(sub.got.slice(2).map((d) => JSON.parse(d).seq)).toEqual([1, 2, 3]);
    const m = await (await fetch(services[name]!.httpUrl + '/metrics')).json();
    expect(m.connections).toBeGreaterThanOrEqual(1);
    expect(m.subscriptions).toBeGreaterThanOrEqual(1);
    sub.close();
  });
});

describe('service processes', () => {
  it('stop cleanly on SIGTERM and restart on the same port', async () => {
    const svc = await startService('ws');
    await svc.stop();
    expect({ exitCode: svc.child.exitCode, signal: svc.child.signalCode }).toEqual({ exitCode: 0, signal: null });
    const again = await svc.restart();
    expect(again.port).toBe(svc.port);
    expect((await fetch(again.httpUrl + '/health')).status).toBe(200);
    await again.kill();
    expect(again.child.signalCode).toBe('SIGKILL');
  });

  it('the replay server shares this edge: Content-Encoding compress → 415 in the same shape', async () => {
    const replay = await startService('replay');
    try {
      const res = await fetch(replay.httpUrl + '/_broadcast', { method: 'POST', body: '{"stream":"s","data":"x"}', headers: { 'content-type': 'application/json', 'content-encoding': 'compress' } });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ statusCode: 415, code: 'RR_ERR_UNSUPPORTED_ENCODING', error: 'Unsupported Media Type' });
    } finally {
      await replay.stop();
    }
  });

  it('refuse bad CLI options with exit code 2', async () => {
    await expect(startService('socketio', { args: ['--mode', 'bogus'] })).rejects.toMatchObject({ code: 'RR_ERR_SERVICE_START' });
  });
});
