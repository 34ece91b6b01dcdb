/**
 * Test helpers for the reference servers: real clients over loopback (ws, socket.io-client),
 * pausable at the TCP level to play a client that stopped reading.
 */
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { io, type Socket as IoSocket } from 'socket.io-client';
import { waitUntil } from '../../lib/time.ts';
import type { ServiceHandle } from './spawn.ts';

export const metrics = async (svc: ServiceHandle) => (await (await fetch(svc.httpUrl + '/metrics')).json()) as Record<string, number>;

export const broadcast = (svc: ServiceHandle, body: unknown) =>
  fetch(svc.httpUrl + '/_broadcast', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

/**
 * One POST on a fresh connection (no keep-alive): with --workers, round-robin accept then
 * spreads consecutive requests over the workers; also what "the port never stops accepting" promises.
 */
export function postFresh(port: number, path: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs over one keep-alive connection: every request lands on the worker that accepted it. */
export interface Poster {
  /** Status and the answering process (`X-Rebound-Pid`). */
  post(body: string): Promise<{ status: number; pid: string }>;
  close(): void;
}

export function pinnedPoster(port: number, path: string): Poster {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    post: (body) =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, pid: String(res.headers['x-rebound-pid'] ?? '') }));
        });
        req.on('error', reject);
        req.end(body);
      }),
    close: () => agent.destroy(),
  };
}

export interface WsTestClient {
  ws: WebSocket;
  sid: string;
  frames: Array<Record<string, unknown>>;
  closed: boolean;
  send(o: unknown): void;
  /** Resolves with the next frame of `type` (or any data frame when type is 'data'). */
  next(type: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  pause(): void;
  close(): void;
}

export async function wsClient(svc: ServiceHandle): Promise<WsTestClient> {
  const ws = new WebSocket(svc.httpUrl.replace('http', 'ws') + '/ws', { maxPayload: 64 * 1024 * 1024 });
  const c: WsTestClient = {
    ws,
    sid: '',
    frames: [],
    closed: false,
    send: (o) => ws.send(typeof o === 'string' ? o : JSON.stringify(o)),
    async next(type, timeoutMs = 5000) {
      const from = c.frames.length;
      const match = (f: Record<string, unknown>) => (type === 'data' ? typeof f.data === 'string' && f.type === undefined : f.type === type);
      await waitUntil(() => c.frames.slice(from).some(match) || c.closed, timeoutMs, `ws frame ${type}`);
      const f = c.frames.slice(from).find(match);
      if (!f) throw new Error(`socket closed before a ${type} frame`);
      return f;
    },
    pause: () => (ws as unknown as { _socket: { pause(): void } })._socket.pause(),
    close: () => ws.terminate(),
  };
  ws.on('message', (raw) => c.frames.push(JSON.parse(raw.toString()) as Record<string, unknown>));
  ws.on('close', () => (c.closed = true));
  ws.on('error', () => {});
  await waitUntil(() => c.frames.some((f) => f.type === 'welcome') || c.closed, 5000, 'ws welcome');
  c.sid = String(c.frames.find((f) => f.type === 'welcome')?.sid ?? '');
  return c;
}

export async function ioClient(svc: ServiceHandle): Promise<{ socket: IoSocket; pause(): void; close(): void; disconnected: () => boolean }> {
  const socket = io(svc.httpUrl, { transports: ['websocket'], reconnection: false, forceNew: true });
  let down = false;
  socket.on('disconnect', () => (down = true));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return {
    socket,
    pause: () => (socket.io.engine.transport as unknown as { ws: { _socket: { pause(): void } } }).ws._socket.pause(),
    close: () => socket.close(),
    disconnected: () => down,
  };
}

/**
 * What a WebSocket relay does to the frames passing through: `fromServer` returns the frames the
 * client gets instead of a server frame (none: dropped); `fromClient` what to forward (absent:
 * nothing) and what to answer the client itself; `onOpen` is told of each client socket (the
 * `index`-th since the relay started), to send it frames of its own.
 */
export interface RelayHooks {
  fromServer?: (frame: string) => string[];
  fromClient?: (frame: string) => { forward?: string; reply?: string };
  onOpen?: (client: WebSocket, index: number) => void;
}

/**
 * A WebSocket relay in front of a real service (same path, query and subprotocol), on port 0:
 * every frame passes unless a hook rewrites it. Plays a server that breaks the protocol in one
 * chosen way, in front of one that does not.
 */
export async function startWsRelay(upstreamHttp: string, path: string, hooks: RelayHooks): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, path, handleProtocols: (protocols) => [...protocols][0] ?? false });
  let opened = 0;
  wss.on('connection', (client, req) => {
    const target = upstreamHttp.replace(/^http/, 'ws') + (req.url ?? path);
    const up = client.protocol ? new WebSocket(target, client.protocol) : new WebSocket(target);
    const early: string[] = [];
    up.on('open', () => early.splice(0).forEach((m) => up.send(m)));
    client.on('message', (raw) => {
      const m = raw.toString();
      const { forward, reply } = hooks.fromClient ? hooks.fromClient(m) : { forward: m };
      if (reply !== undefined) client.send(reply);
      if (forward === undefined) return;
      if (up.readyState === WebSocket.OPEN) up.send(forward);
      else early.push(forward);
    });
    up.on('message', (raw) => {
      const m = raw.toString();
      for (const f of hooks.fromServer ? hooks.fromServer(m) : [m]) client.send(f);
    });
    const end = () => (client.terminate(), up.terminate());
    for (const s of [client, up]) {
      s.on('close', end);
      s.on('error', end);
    }
    hooks.onOpen?.(client, opened++);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => (wss.clients.forEach((c) => c.terminate()), server.close(() => r()))),
  };
}
