import { until } from '../../lib/time.ts';
import { createServer } from 'node:http';
import { createAdapter as createClusterAdapter } from '@socket.io/cluster-adapter';
import { Server, type Socket } from 'socket.io';
import type { Broadcast } from '../common/broadcast.ts';
import type { PrimaryLink } from '../common/cluster/hub.ts';
import type { ClusterableService } from '../common/cluster/main.ts';
import { createServiceApp } from '../common/http-app.ts';
import { resolveLimits, type ReferenceLimits } from '../common/limits.ts';
import { listen } from '../common/service-main.ts';
import { ProgressWatch } from '../common/slow-consumer.ts';
import { asObjectPayload, objectRoom } from './conventions.ts';
import { connectRedisAdapter, type RedisAdapterHandle } from './redis.ts';

export type SocketIoMode = 'default' | 'csr';

export interface SocketIoServerOptions extends Partial<ReferenceLimits> {
  port: number;
  host: string;
  broadcastKey: string;
  mode: SocketIoMode;
  /** CSR: how long a disconnected session stays recoverable. @default 120000 */
  maxDisconnectionMs?: number;
  /** Engine.IO heartbeat. @default 25000 / 20000 (Socket.IO's; the benchmark runs 3000 / 6000) */
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
  /** Several nodes through Redis (`--adapter redis`): this URL; undefined keeps the in-memory adapter. */
  redisUrl?: string | undefined;
}

/** What Engine.IO keeps for one connection, read to bound it (its own types keep these private). */
interface EngineConn {
  writeBuffer: Array<{ data?: unknown }>;
  transport?: { socket?: { bufferedAmount?: number; terminate?: () => void } };
  close(discard?: boolean): void;
}
const engineOf = (socket: Socket) => socket.conn as unknown as EngineConn;
type RawWs = { readyState?: number; terminate?: () => void };

/** Bytes waiting for this socket: Engine.IO's write buffer plus what the WebSocket has not sent. */
function queuedBytes(socket: Socket): number {
  const conn = engineOf(socket);
  let n = conn.transport?.socket?.bufferedAmount ?? 0;
  for (const p of conn.writeBuffer) n += typeof p.data === 'string' || Buffer.isBuffer(p.data) ? p.data.length : 0;
  return n;
}

const terminated = new WeakSet<Socket>();

/** Cut the TCP connection (once): a reader that stopped cannot read a close frame, and its buffer is freed at once. */
function terminate(socket: Socket): void {
  if (terminated.has(socket)) return;
  terminated.add(socket);
  const raw = engineOf(socket).transport?.socket;
  if (raw?.terminate) raw.terminate();
  else socket.disconnect(true);
}

/**
 * Socket.IO 4 reference server. Streams are rooms; broadcasts are `message` events to the room.
 * Two client conventions (services/socketio/conventions.ts): Rebound's `subscribe` + ack with
 * string payloads, and the benchmark's `join` with object payloads. `whisper` (room, payload)
 * goes to the room's other members. `csr` turns on Connection State Recovery with the in-memory
 * adapter (the benchmark's setup). Limits (buffered bytes, rooms, name length, packet size)
 * match the replay server's.
 *
 * With a `link` (one worker of `--workers N`, default mode only) rooms span the workers through
 * the official @socket.io/cluster-adapter (its primary side: `setupPrimary`), and a broadcast's
 * 201 waits for the primary's barrier: every other worker has emitted it by then, so the next
 * broadcast, wherever it lands, cannot overtake it.
 */
export async function createSocketIoServer(opts: SocketIoServerOptions, link?: PrimaryLink): Promise<ClusterableService> {
  const limits = resolveLimits(opts);
  let io!: Server;
  const counters = { subscriptions: 0, recovered: 0, tooSlowDisconnects: 0, refusedSubscriptions: 0, whispers: 0 };

  /** Before a room broadcast: drop its members that stopped reading (more than the bound queued). */
  const dropSlow = (rooms: string[]) => {
    for (const room of rooms) {
      for (const id of io.of('/').adapter.rooms.get(room) ?? []) {
        const s = io.of('/').sockets.get(id);
        if (s && !terminated.has(s) && progressOf(s).tooSlow(queuedBytes(s), limits)) {
          counters.tooSlowDisconnects++;
          terminate(s);
        }
      }
    }
  };

  // CSR stores every room broadcast for members that are away, so emitting to a convention nobody
  // uses would double that store: a convention's room is served once some socket has used it.
  // On Redis or in a cluster a subscriber may sit on another node, so both conventions are always served.
  const spread = opts.redisUrl !== undefined || link !== undefined;
  const used = { string: spread, object: spread };
  const redis: RedisAdapterHandle | undefined = opts.redisUrl !== undefined ? await connectRedisAdapter(opts.redisUrl, opts.mode) : undefined;
  const name = `socketio-${opts.mode}${redis ? '-redis' : ''}`;
  const deliver = (batch: Broadcast[]): void | Promise<void> => {
    emitAll(batch);
    if (link) return link.barrier();
  };
  const emitAll = (batch: Broadcast[]) => {
    for (const b of batch) {
      const obj = objectRoom(b.stream);
      dropSlow([b.stream, obj]);
      const exclude = b.meta?.exclude_socket;
      const to = (room: string) => (exclude === undefined ? io.to(room) : io.to(room).except(exclude));
      if (used.string) to(b.stream).emit('message', b.data);
      if (used.object) to(obj).emit('message', asObjectPayload(b.data));
    }
  };
  const { app, close: closeApp } = createServiceApp({
    name,
    broadcastKey: opts.broadcastKey,
    deliver,
    stats: async () => ({
      mode: opts.mode,
      adapter: redis ? 'redis' : link ? 'cluster' : 'memory',
      connections: io.engine.clientsCount,
      ...counters,
      rooms: io.of('/').adapter.rooms.size,
      limits,
      ...(link ? { cluster: await link.clusterStats().catch(() => null) } : {}),
    }),
  });
  const server = createServer(app);
  io = new Server(server, {
    transports: ['websocket'],
    serveClient: false,
    maxHttpBufferSize: limits.maxPayloadBytes,
    pingInterval: opts.pingIntervalMs ?? 25_000,
    pingTimeout: opts.pingTimeoutMs ?? 20_000,
    ...(redis ? { adapter: redis.adapter } : link ? { adapter: createClusterAdapter() } : {}),
    ...(opts.mode === 'csr' ? { connectionStateRecovery: { maxDisconnectionDuration: opts.maxDisconnectionMs ?? 120_000, skipMiddlewares: true } } : {}),
  });
  // Which process accepted the socket: shows the spread over workers (tests, benches).
  io.engine.on('headers', (headers: Record<string, string>) => {
    headers['X-Rebound-Pid'] = String(process.pid);
  });
  const streamsOf = (socket: Socket) => socket.rooms.size - 1;
  const watches = new WeakMap<Socket, ProgressWatch>();
  const progressOf = (socket: Socket) => {
    let w = watches.get(socket);
    if (!w) {
      watches.set(socket, (w = new ProgressWatch()));
      // The WebSocket transport emits drain when everything handed to it was written.
      (engineOf(socket).transport as unknown as { on?(e: 'drain', f: () => void): void } | undefined)?.on?.('drain', w.drained);
    }
    return w;
  };

  io.on('connection', (socket) => {
    if (socket.recovered) {
      counters.recovered++;
      counters.subscriptions += streamsOf(socket);
    }
    /** Join `room` under the limits; returns the reason when refused. */
    const join = (stream: unknown, room: (s: string) => string, convention: keyof typeof used): string | undefined => {
      if (typeof stream !== 'string' || stream === '' || stream.length > limits.maxStreamLength) return 'invalid_stream';
      const r = room(stream);
      if (socket.rooms.has(r)) return undefined;
      if (streamsOf(socket) >= limits.maxSubscriptions) {
        counters.refusedSubscriptions++;
        return 'too_many_subscriptions';
      }
      void socket.join(r);
      used[convention] = true;
      counters.subscriptions++;
      return undefined;
    };
    socket.on('subscribe', (stream: unknown, ack?: unknown) => {
      const reason = join(stream, (s) => s, 'string');
      if (typeof ack === 'function') (ack as (r: unknown) => void)(reason ? { ok: false, reason } : { ok: true });
    });
    // The benchmark's client: no ack (a refusal is only counted in /metrics), object payloads.
    socket.on('join', (stream: unknown, ack?: unknown) => {
      const reason = join(stream, objectRoom, 'object');
      if (typeof ack === 'function') (ack as (r: unknown) => void)(reason ? { ok: false, reason } : { ok: true });
    });
    socket.on('unsubscribe', (stream: unknown, ack?: unknown) => {
      if (typeof stream === 'string') {
        for (const r of [stream, objectRoom(stream)]) {
          if (!socket.rooms.has(r)) continue;
          void socket.leave(r);
          counters.subscriptions--;
        }
      }
      if (typeof ack === 'function') (ack as (r: unknown) => void)({ ok: true });
    });
    // The benchmark's whisper: (room, payload) to the room's other members, payload untouched.
    // Only a member may whisper, as with AnyCable, so a stranger cannot spray a stream.
    socket.on('whisper', (stream: unknown, payload: unknown) => {
      if (typeof stream !== 'string') return;
      const rooms = [stream, objectRoom(stream)];
      if (!rooms.some((r) => socket.rooms.has(r))) return;
      counters.whispers++;
      dropSlow(rooms);
      socket.to(rooms).emit('whisper', payload);
    });
    socket.on('disconnecting', () => {
      counters.subscriptions -= streamsOf(socket);
    });
  });
  const port = await listen(server, opts.port, opts.host);
  return {
    port,
    report: () => ({ connections: io.engine.clientsCount, subscriptions: counters.subscriptions, whispers: counters.whispers, tooSlowDisconnects: counters.tooSlowDisconnects }),
    async stop() {
      closeApp();
      // Engine.IO forgets a client as soon as it starts closing, but its WebSocket stays open
      // until the peer answers the close, which a client that does not read never does (and the
      // HTTP server's close waits for it): keep hold of the raw sockets, grace period, then cut.
      const raw = Object.values((io.engine as unknown as { clients: Record<string, EngineConn> }).clients).flatMap((c) => (c.transport?.socket ? [c.transport.socket as RawWs] : []));
      io.disconnectSockets(true);
      await until(() => raw.every((w) => w.readyState === 3), limits.stopGraceMs, undefined, 10);
      for (const w of raw) w.terminate?.();
      await new Promise<void>((r) => {
        void io.close(() => r());
        server.closeAllConnections();
      });
      await redis?.close();
    },
  };
}
