import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Broadcast } from '../common/broadcast.ts';
import { createServiceApp } from '../common/http-app.ts';
import { listen, type RunningService } from '../common/service-main.ts';

export interface WsServerOptions {
  port: number;
  host: string;
  broadcastKey: string;
  /** Largest client frame accepted; bigger ones close the socket with 1009. @default 64 KiB */
  maxPayload?: number;
}

/**
 * Raw `ws` server with topics: the at-most-once baseline (uWebSockets.js's role in the
 * benchmark). Client frames: `{"type":"subscribe","stream":"s"}` / `{"type":"unsubscribe",...}`;
 * server frames: `{"type":"subscribed","stream":"s"}`, `{"type":"error","reason":...}` and data
 * `{"stream":"s","data":"<string>"}`. Messages published while a client is away are gone.
 */
export async function createWsServer(opts: WsServerOptions): Promise<RunningService> {
  const topics = new Map<string, Set<WebSocket>>();
  const subsOf = new WeakMap<WebSocket, Set<string>>();
  let connections = 0;
  let subscriptions = 0;

  const deliver = (batch: Broadcast[]) => {
    for (const b of batch) {
      const subs = topics.get(b.stream);
      if (!subs) continue;
      // One frame per message, shared by every subscriber.
      const frame = JSON.stringify({ stream: b.stream, data: b.data });
      for (const ws of subs) if (ws.readyState === 1) ws.send(frame);
    }
  };

  const { app, close: closeApp } = createServiceApp({
    name: 'ws',
    broadcastKey: opts.broadcastKey,
    deliver,
    stats: () => ({ connections, subscriptions, streams: topics.size }),
  });
  const server = createServer(app);
  const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false, clientTracking: true, maxPayload: opts.maxPayload ?? 64 * 1024 });

  const unsubscribe = (ws: WebSocket, stream: string) => {
    const set = topics.get(stream);
    if (set?.delete(ws)) subscriptions--;
    if (set && set.size === 0) topics.delete(stream);
    subsOf.get(ws)?.delete(stream);
  };

  wss.on('connection', (ws) => {
    connections++;
    subsOf.set(ws, new Set());
    ws.on('message', (raw, isBinary) => {
      let msg: { type?: unknown; stream?: unknown };
      try {
        msg = JSON.parse(isBinary ? '' : raw.toString());
      } catch {
        ws.send(JSON.stringify({ type: 'error', reason: 'invalid_json' }));
        return;
      }
      if (typeof msg !== 'object' || msg === null || typeof msg.stream !== 'string' || msg.stream === '') {
        ws.send(JSON.stringify({ type: 'error', reason: 'invalid_command' }));
        return;
      }
      if (msg.type === 'subscribe') {
        let set = topics.get(msg.stream);
        if (!set) topics.set(msg.stream, (set = new Set()));
        if (!set.has(ws)) {
          set.add(ws);
          subscriptions++;
          subsOf.get(ws)!.add(msg.stream);
        }
        ws.send(JSON.stringify({ type: 'subscribed', stream: msg.stream }));
      } else if (msg.type === 'unsubscribe') {
        unsubscribe(ws, msg.stream);
        ws.send(JSON.stringify({ type: 'unsubscribed', stream: msg.stream }));
      } else {
        ws.send(JSON.stringify({ type: 'error', reason: 'unknown_type' }));
      }
    });
    ws.on('error', () => {});
    ws.on('close', () => {
      connections--;
      for (const s of [...(subsOf.get(ws) ?? [])]) unsubscribe(ws, s);
    });
  });

  const port = await listen(server, opts.port, opts.host);
  return {
    port,
    async stop() {
      for (const ws of wss.clients) ws.close(1012, 'server restart');
      wss.close();
      closeApp();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
