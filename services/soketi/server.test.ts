/**
 * The local soketi as the runners start it (docs/soketi.md): port 0 reported, health on the
 * runners' probe path, the Pusher handshake over a raw socket, an event published through the
 * signed HTTP API reaching a subscriber, the app credentials from env, and a graceful SIGTERM.
 * Skipped only where soketi is not installed (`npm run install:soketi`; .ci/run installs it).
 */
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startService, type ServiceHandle } from '../common/spawn.ts';
import { soketiAvailability } from './load.ts';

const availability = soketiAvailability();

interface PusherFrame {
  event: string;
  channel?: string;
  data?: unknown;
}

/** A raw Pusher protocol 7 client: every frame it received, and a wait for the next of an event. */
async function pusherSocket(svc: ServiceHandle, key = 'app-key') {
  const ws = new WebSocket(`ws://127.0.0.1:${svc.port}/app/${key}?protocol=7&client=js&version=8.6.0`);
  const frames: PusherFrame[] = [];
  const waiters: Array<{ event: string; resolve: (f: PusherFrame) => void }> = [];
  ws.on('message', (raw) => {
    const f = JSON.parse(String(raw)) as PusherFrame;
    frames.push(f);
    const i = waiters.findIndex((w) => w.event === f.event);
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(f);
  });
  const next = (event: string, ms = 5000) =>
    new Promise<PusherFrame>((resolve, reject) => {
      const seen = frames.find((f) => f.event === event);
      if (seen) return resolve(frames.splice(frames.indexOf(seen), 1)[0]!);
      const t = setTimeout(() => reject(new Error(`no ${event} within ${ms} ms (got ${frames.map((f) => f.event).join(', ') || 'nothing'})`)), ms);
      waiters.push({
        event,
        resolve: (f) => {
          clearTimeout(t);
          frames.splice(frames.indexOf(f), 1);
          resolve(f);
        },
      });
    });
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, next, closed, send: (f: PusherFrame) => ws.send(JSON.stringify(f)) };
}

/** Pusher's HTTP API signature (pusher.com/docs/channels/library_auth_reference/rest-api). */
function signedEventsUrl(svc: ServiceHandle, body: string, app = { id: 'app-id', key: 'app-key', secret: 'app-secret' }): string {
  const path = `/apps/${app.id}/events`;
  const params: Record<string, string> = { auth_key: app.key, auth_timestamp: String(Math.floor(Date.now() / 1000)), auth_version: '1.0', body_md5: createHash('md5').update(body).digest('hex') };
  const query = Object.keys(params)
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  const signature = createHmac('sha256', app.secret).update(`POST\n${path}\n${query}`).digest('hex');
  return `${svc.httpUrl}${path}?${query}&auth_signature=${signature}`;
}

const trigger = (svc: ServiceHandle, channel: string, data: string, app?: { id: string; key: string; secret: string }) => {
  const body = JSON.stringify({ name: 'msg', channel, data });
  return fetch(signedEventsUrl(svc, body, app), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
};

describe.skipIf(!availability.available)('soketi service', () => {
  let svc: ServiceHandle;
  beforeAll(async () => {
    svc = await startService('soketi');
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('reports the port it bound (asked for 0) and answers the health paths, /health included', async () => {
    expect(svc.port).toBeGreaterThan(0);
    for (const path of ['/', '/ready', '/health']) {
      const r = await fetch(svc.httpUrl + path);
      expect([path, r.status, await r.text()]).toEqual([path, 200, 'OK']);
    }
  });

  it('speaks Pusher protocol 7: connection_established, subscribe, ping/pong', async () => {
    const c = await pusherSocket(svc);
    try {
      const hello = await c.next('pusher:connection_established');
      const data = JSON.parse(String(hello.data)) as { socket_id: string; activity_timeout: number };
      expect(data.socket_id).toMatch(/^\d+\.\d+$/);
      expect(data.activity_timeout).toBeGreaterThan(0);
      c.send({ event: 'pusher:subscribe', data: { channel: 'stream-a' } });
      expect(await c.next('pusher_internal:subscription_succeeded')).toMatchObject({ channel: 'stream-a' });
      c.send({ event: 'pusher:ping', data: {} });
      await c.next('pusher:pong');
    } finally {
      c.ws.close();
    }
  });

  it('an event triggered through the signed HTTP API reaches the subscriber; a wrong secret is refused', async () => {
    const c = await pusherSocket(svc);
    try {
      await c.next('pusher:connection_established');
      c.send({ event: 'pusher:subscribe', data: { channel: 'stream-b' } });
      await c.next('pusher_internal:subscription_succeeded');
      const ok = await trigger(svc, 'stream-b', 'hello 1');
      expect(ok.status).toBe(200);
      expect(await c.next('msg')).toMatchObject({ channel: 'stream-b', data: 'hello 1' });
      const bad = await trigger(svc, 'stream-b', 'forged', { id: 'app-id', key: 'app-key', secret: 'not-the-secret' });
      expect(bad.status).toBe(401);
    } finally {
      c.ws.close();
    }
  });

  it('an unknown app key is refused with Pusher error 4001', async () => {
    const c = await pusherSocket(svc, 'nope');
    const err = await c.next('pusher:error');
    expect(err.data).toMatchObject({ code: 4001 });
    expect(await c.closed).toBe(4001);
  });
});

describe.skipIf(!availability.available)('soketi service lifecycle', () => {
  it('takes its app from SOKETI_DEFAULT_APP_*', async () => {
    const app = { id: 'rr-app', key: 'rr-key', secret: 'rr-secret-1' };
    const svc = await startService('soketi', { env: { SOKETI_DEFAULT_APP_ID: app.id, SOKETI_DEFAULT_APP_KEY: app.key, SOKETI_DEFAULT_APP_SECRET: app.secret } });
    try {
      const c = await pusherSocket(svc, app.key);
      await c.next('pusher:connection_established');
      c.send({ event: 'pusher:subscribe', data: { channel: 's' } });
      await c.next('pusher_internal:subscription_succeeded');
      expect((await trigger(svc, 's', 'x', app)).status).toBe(200);
      expect(await c.next('msg')).toMatchObject({ data: 'x' });
      // The default app is not there any more.
      expect((await trigger(svc, 's', 'y')).status).not.toBe(200);
      c.ws.close();
    } finally {
      await svc.stop();
    }
  });

  it('SIGTERM: clients get pusher:error 4200 and a close, the process exits 0 within the deadline and frees the port', async () => {
    const svc = await startService('soketi', { args: ['--stop-grace-ms', '200'] });
    const c = await pusherSocket(svc);
    await c.next('pusher:connection_established');
    const exit = new Promise<number | null>((r) => svc.child.once('exit', (code) => r(code)));
    const tookMs = await svc.stop(5000);
    expect(await exit).toBe(0);
    expect(tookMs).toBeLessThan(5000);
    expect(await c.next('pusher:error')).toMatchObject({ data: { code: 4200 } });
    expect(await c.closed).toBe(4200);
    await expect(fetch(`${svc.httpUrl}/health`)).rejects.toThrow();
  });

  it('a second soketi on a port in use fails to start; killed with clients, it restarts on the same port at once', async () => {
    const first = await startService('soketi');
    const refused = startService('soketi', { port: first.port });
    await expect(refused).rejects.toMatchObject({ code: 'RR_ERR_SERVICE_START' });
    await expect(refused).rejects.toThrow(`port ${first.port} on 127.0.0.1 is already in use`); // the service's own reason, quoted
    expect((await fetch(`${first.httpUrl}/health`)).status).toBe(200);
    const c = await pusherSocket(first);
    await c.next('pusher:connection_established');
    await first.kill('SIGKILL');
    const again = await startService('soketi', { port: first.port });
    try {
      expect(again.port).toBe(first.port);
      const d = await pusherSocket(again);
      await d.next('pusher:connection_established');
      d.ws.close();
    } finally {
      await again.stop();
    }
  });
});
