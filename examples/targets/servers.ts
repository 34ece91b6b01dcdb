import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * The two worked examples' servers (docs/targets.md), shared by their tests and target:check's
 * (engine/check/check.test.ts). Each knows nothing of Rebound.
 */

/**
 * Worked example 1 (docs/targets.md): a team's own JSON-over-ws server, written in examples/targets/servers.ts, driven
 * through examples/targets/json-ws.ts by the real jitter CLI. The server knows nothing of Rebound:
 * its own join message, its own publish endpoint, no `/_broadcast`. `port`: 0 picks one; a
 * restarted server (serve-json-ws.ts) comes back on the port it had.
 */
export async function jsonWsServer(port = 0) {
  const rooms = new Map<string, Set<WebSocket>>();
  const http = createServer((req, res) => {
    const m = /^\/api\/rooms\/([^/]+)\/messages$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !m) return void ((res.statusCode = 404), res.end());
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body = (JSON.parse(text) as { body?: unknown }).body;
      if (typeof body !== 'string') return void ((res.statusCode = 400), res.end());
      const frame = JSON.stringify({ op: 'msg', room: decodeURIComponent(m[1]!), body });
      for (const ws of rooms.get(decodeURIComponent(m[1]!)) ?? []) ws.send(frame);
      res.statusCode = 202;
      res.end();
    });
  });
  const wss = new WebSocketServer({ server: http, path: '/live' });
  wss.on('connection', (ws) => {
    ws.on('message', (raw) => {
      const f = JSON.parse(raw.toString()) as { op?: string; room?: string };
      if (f.op !== 'join' || typeof f.room !== 'string') return;
      const set = rooms.get(f.room) ?? new Set<WebSocket>();
      rooms.set(f.room, set.add(ws));
      ws.on('close', () => set.delete(ws));
      ws.send(JSON.stringify({ op: 'joined', room: f.room }));
    });
  });
  await new Promise<void>((r) => http.listen(port, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, close: () => (wss.close(), new Promise((r) => http.close(r))) };
}

/**
 * Worked example 2 (docs/targets.md): an SSE server of a team's own, written here, driven through
 * examples/targets/sse.ts by the real CLIs. It knows nothing of Rebound: one stream per path, event
 * ids are offsets, a history of the last `history` events per stream; a reconnect's Last-Event-ID
 * is answered from that history, with `event: reset` first when the history no longer reaches back.
 */
export async function sseServer(o: { history: number; retryMs: number; ignoreLastEventId?: boolean }) {
  type Stream = { latest: number; events: { id: number; frame: string }[]; subscribers: Set<ServerResponse> };
  const streams = new Map<string, Stream>();
  const streamOf = (name: string) => streams.get(name) ?? streams.set(name, { latest: 0, events: [], subscribers: new Set() }).get(name)!;
  const http = createServer((req, res) => {
    const m = /^\/sse\/([^/?]+)$/.exec(req.url ?? '');
    if (!m) return void ((res.statusCode = 404), res.end());
    const s = streamOf(decodeURIComponent(m[1]!));
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const id = ++s.latest;
        const frame = `id: ${id}\n${body.split('\n').map((l) => `data: ${l}\n`).join('')}\n`;
        s.events.push({ id, frame });
        if (s.events.length > o.history) s.events.shift();
        for (const sub of s.subscribers) sub.write(frame);
        res.statusCode = 202;
        res.end();
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.write(`retry: ${o.retryMs}\n\n`);
    const last = req.headers['last-event-id'];
    // `ignoreLastEventId`: a server that restores nothing (target:check's negative case: a target declaring history against it).
    if (typeof last === 'string' && !o.ignoreLastEventId) {
      const n = /^\d+$/.test(last) ? Number(last) : NaN;
      const oldest = s.events[0]?.id ?? s.latest + 1;
      if (!(n <= s.latest)) res.write('event: reset\ndata: unknown\n\n');
      else if (n < oldest - 1) res.write('event: reset\ndata: evicted\n\n');
      for (const e of s.events) if (!(e.id <= n)) res.write(e.frame);
    }
    res.write(`event: ready\nid: ${s.latest}\ndata: ${s.latest}\n\n`);
    s.subscribers.add(res);
    req.on('close', () => s.subscribers.delete(res));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: () => (http.closeAllConnections(), new Promise((r) => http.close(r))),
  };
}
