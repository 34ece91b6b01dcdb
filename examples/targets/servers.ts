import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * Worked example 1's server (docs/targets.md): a team's own JSON-over-ws server that knows nothing
 * of Rebound: its own join message, its own publish endpoint, no `/_broadcast`. The example's tests
 * drive it through examples/targets/json-ws.ts with the real runner CLIs. `port`: 0 picks one; a
 * restarted server (serve-json-ws.ts) comes back on the port it had.
 */
export async function startJsonWsServer(port = 0) {
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
