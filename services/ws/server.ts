import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Broadcast } from '../common/broadcast.ts';
import { createServiceApp } from '../common/http-app.ts';
import { resolveLimits, waitFor, type ReferenceLimits } from '../common/limits.ts';
import { listen, type RunningService } from '../common/service-main.ts';
import { ProgressWatch } from '../common/slow-consumer.ts';

export interface WsServerOptions extends Partial<ReferenceLimits> {
  port: number;
  host: string;
  broadcastKey: string;
}

/** Per-socket state: its id (for `meta.exclude_socket`), its topics and whether it keeps reading. */
interface Client {
  sid: string;
  topics: Set<string>;
  progress: ProgressWatch;
}

/**
 * Raw `ws` server with topics: the at-most-once baseline (uWebSockets.js's role in the
 * benchmark). Protocol in docs/running.md: `welcome {sid}` on connect; client frames
 * subscribe/unsubscribe/whisper; data frames `{"stream","data"}`. Messages published while a
 * client is away are gone. Limits (buffered bytes, topics, name length) match the replay server's.
 */
export async function createWsServer(opts: WsServerOptions): Promise<RunningService> {
  const limits = resolveLimits(opts);
  const topics = new Map<string, Set<WebSocket>>();
  const clients = new Map<WebSocket, Client>();
  const bySid = new Map<string, WebSocket>();
  const counters = { connections: 0, subscriptions: 0, tooSlowDisconnects: 0, refusedSubscriptions: 0, whispers: 0 };

  /** Send unless the socket already holds more than the bound unsent: then it is too slow. */
  const send = (ws: WebSocket, frame: string): void => {
    if (ws.readyState !== 1) return;
    const queued = ws.bufferedAmount;
    if (queued > limits.maxBufferedBytes && clients.get(ws)?.progress.tooSlow(queued, limits)) {
      counters.tooSlowDisconnects++;
      // A reader that stopped cannot read a close frame either: free the buffer now.
      ws.terminate();
      return;
    }
    ws.send(frame);
  };

  const deliver = (batch: Broadcast[]) => {
    for (const b of batch) {
      const subs = topics.get(b.stream);
      if (!subs) continue;
      const skip = b.meta?.exclude_socket === undefined ? undefined : bySid.get(b.meta.exclude_socket);
      // One frame per message, shared by every subscriber.
      const frame = JSON.stringify({ stream: b.stream, data: b.data });
      for (const ws of subs) if (ws !== skip) send(ws, frame);
    }
  };

  const { app, close: closeApp } = createServiceApp({
    name: 'ws',
    broadcastKey: opts.broadcastKey,
    deliver,
    stats: () => ({ ...counters, streams: topics.size, limits }),
  });
  const server = createServer(app);
  const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false, clientTracking: true, maxPayload: limits.maxPayloadBytes });

  const unsubscribe = (ws: WebSocket, stream: string) => {
    const set = topics.get(stream);
    if (set?.delete(ws)) counters.subscriptions--;
    if (set && set.size === 0) topics.delete(stream);
    clients.get(ws)?.topics.delete(stream);
  };

  const onFrame = (ws: WebSocket, me: Client, text: string | undefined) => {
    const reply = (o: Record<string, unknown>) => send(ws, JSON.stringify(o));
    let msg: { type?: unknown; stream?: unknown; data?: unknown };
    try {
      msg = JSON.parse(text ?? '');
    } catch {
      return reply({ type: 'error', reason: 'invalid_json' });
    }
    if (typeof msg !== 'object' || msg === null || typeof msg.stream !== 'string' || msg.stream === '') return reply({ type: 'error', reason: 'invalid_command' });
    const stream = msg.stream;
    if (stream.length > limits.maxStreamLength) return reply({ type: 'error', reason: 'invalid_stream', stream: stream.slice(0, 64) });
    if (msg.type === 'subscribe') {
      if (!me.topics.has(stream)) {
        if (me.topics.size >= limits.maxSubscriptions) {
          counters.refusedSubscriptions++;
          return reply({ type: 'error', reason: 'too_many_subscriptions', stream });
        }
        let set = topics.get(stream);
        if (!set) topics.set(stream, (set = new Set()));
        set.add(ws);
        me.topics.add(stream);
        counters.subscriptions++;
      }
      reply({ type: 'subscribed', stream });
    } else if (msg.type === 'unsubscribe') {
      unsubscribe(ws, stream);
      reply({ type: 'unsubscribed', stream });
    } else if (msg.type === 'whisper') {
      // Client-to-client, like AnyCable's whisper: to the topic's other subscribers, only from a subscriber.
      if (!me.topics.has(stream)) return reply({ type: 'error', reason: 'not_subscribed', stream });
      if (typeof msg.data !== 'string') return reply({ type: 'error', reason: 'invalid_whisper', stream });
      counters.whispers++;
      const frame = JSON.stringify({ type: 'whisper', stream, data: msg.data });
      for (const peer of topics.get(stream) ?? []) if (peer !== ws) send(peer, frame);
    } else {
      reply({ type: 'error', reason: 'unknown_type' });
    }
  };

  wss.on('connection', (ws) => {
    counters.connections++;
    const me: Client = { sid: randomUUID(), topics: new Set(), progress: new ProgressWatch() };
    clients.set(ws, me);
    // ws has no public drain event; its TCP socket's says the queue emptied.
    (ws as unknown as { _socket?: { on(e: 'drain', f: () => void): void } })._socket?.on('drain', me.progress.drained);
    bySid.set(me.sid, ws);
    send(ws, JSON.stringify({ type: 'welcome', sid: me.sid }));
    ws.on('message', (raw, isBinary) => onFrame(ws, me, isBinary ? undefined : raw.toString()));
    ws.on('error', () => {});
    ws.on('close', () => {
      counters.connections--;
      for (const s of [...me.topics]) unsubscribe(ws, s);
      clients.delete(ws);
      bySid.delete(me.sid);
    });
  });

  const port = await listen(server, opts.port, opts.host);
  return {
    port,
    async stop() {
      closeApp();
      for (const ws of wss.clients) ws.close(1012, 'server restart');
      // Clients that do not read never answer the close handshake: give the rest a grace period, then cut.
      await waitFor(() => wss.clients.size === 0, limits.stopGraceMs);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
