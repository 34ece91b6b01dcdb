import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Broadcast } from '../common/broadcast.ts';
import type { PrimaryLink } from '../common/cluster/hub.ts';
import type { ClusterableService } from '../common/cluster/main.ts';
import { createServiceApp } from '../common/http-app.ts';
import { resolveLimits, waitFor, type ReferenceLimits } from '../common/limits.ts';
import { listen } from '../common/service-main.ts';
import { ProgressWatch } from '../common/slow-consumer.ts';

export interface WsServerOptions extends Partial<ReferenceLimits> {
  port: number;
  host: string;
  broadcastKey: string;
}

/** What the fan-out sends: a broadcast, or a whisper (its sender in `meta.exclude_socket`). */
type Outgoing = Broadcast & { whisper?: true };

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
 *
 * With a `link` (one worker of `--workers N`) broadcasts and whispers go through the primary,
 * which sends them to every worker (this one too) in one order: each client gets each once, in
 * the same order whichever worker holds it.
 */
export async function createWsServer(opts: WsServerOptions, link?: PrimaryLink): Promise<ClusterableService> {
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

  /** This process's subscribers of each item; a sid that lives on another worker skips nobody here. */
  const fanout = (batch: Outgoing[]) => {
    for (const b of batch) {
      const subs = topics.get(b.stream);
      if (!subs) continue;
      const skip = b.meta?.exclude_socket === undefined ? undefined : bySid.get(b.meta.exclude_socket);
      // One frame per message, shared by every subscriber.
      const frame = JSON.stringify(b.whisper ? { type: 'whisper', stream: b.stream, data: b.data } : { stream: b.stream, data: b.data });
      for (const ws of subs) if (ws !== skip) send(ws, frame);
    }
  };
  // Relayed items come from this cluster's own workers, validated where they entered.
  link?.onRelay((items) => fanout(items as Outgoing[]));

  const { app, close: closeApp } = createServiceApp({
    name: 'ws',
    broadcastKey: opts.broadcastKey,
    // The 201 waits until the primary has sent the batch to every worker.
    deliver: (batch) => (link ? link.relay(batch) : fanout(batch)),
    stats: async () => ({ ...counters, streams: topics.size, limits, ...(link ? { cluster: await link.clusterStats().catch(() => null) } : {}) }),
  });
  const server = createServer(app);
  const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false, clientTracking: true, maxPayload: limits.maxPayloadBytes });
  // Which process accepted the socket: shows the spread over workers (tests, benches).
  const pidHeader = `X-Rebound-Pid: ${process.pid}`;
  wss.on('headers', (headers) => headers.push(pidHeader));

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
      const whisper: Outgoing = { stream, data: msg.data, meta: { exclude_socket: me.sid }, whisper: true };
      if (link) link.relayNoWait([whisper]);
      else fanout([whisper]);
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
    report: () => ({ connections: counters.connections, subscriptions: counters.subscriptions, whispers: counters.whispers, tooSlowDisconnects: counters.tooSlowDisconnects }),
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
