import { createServer } from 'node:http';
import { Server } from 'socket.io';
import type { Broadcast } from '../common/broadcast.ts';
import { createServiceApp } from '../common/http-app.ts';
import { listen, type RunningService } from '../common/service-main.ts';

export type SocketIoMode = 'default' | 'csr';

export interface SocketIoServerOptions {
  port: number;
  host: string;
  broadcastKey: string;
  mode: SocketIoMode;
  /** CSR: how long a disconnected session stays recoverable. @default 120000 */
  maxDisconnectionMs?: number;
}

/**
 * Socket.IO 4 reference server. A client subscribes by emitting `subscribe` (stream name, ack)
 * which joins the room of that name; broadcasts are `message` events to the room.
 * `csr` turns on Connection State Recovery with the in-memory adapter (the benchmark's setup):
 * rooms and missed packets come back when the client reconnects within maxDisconnectionMs.
 */
export async function createSocketIoServer(opts: SocketIoServerOptions): Promise<RunningService> {
  let io!: Server;
  let subscriptions = 0;
  let recovered = 0;
  const deliver = (batch: Broadcast[]) => {
    for (const b of batch) io.to(b.stream).emit('message', b.data);
  };
  const { app, close: closeApp } = createServiceApp({
    name: `socketio-${opts.mode}`,
    broadcastKey: opts.broadcastKey,
    deliver,
    stats: () => ({ mode: opts.mode, connections: io.engine.clientsCount, subscriptions, rooms: io.of('/').adapter.rooms.size, recovered }),
  });
  const server = createServer(app);
  io = new Server(server, {
    transports: ['websocket'],
    serveClient: false,
    ...(opts.mode === 'csr' ? { connectionStateRecovery: { maxDisconnectionDuration: opts.maxDisconnectionMs ?? 120_000, skipMiddlewares: true } } : {}),
  });
  io.on('connection', (socket) => {
    if (socket.recovered) {
      recovered++;
      subscriptions += socket.rooms.size - 1;
    }
    socket.on('subscribe', (stream: unknown, ack?: unknown) => {
      const reply = typeof ack === 'function' ? (ack as (r: unknown) => void) : () => {};
      if (typeof stream !== 'string' || stream === '' || stream.length > 1024) return reply({ ok: false, reason: 'invalid_stream' });
      if (!socket.rooms.has(stream)) {
        void socket.join(stream);
        subscriptions++;
      }
      reply({ ok: true });
    });
    socket.on('disconnecting', () => {
      subscriptions -= socket.rooms.size - 1;
    });
  });
  const port = await listen(server, opts.port, opts.host);
  return {
    port,
    async stop() {
      closeApp();
      await new Promise<void>((r) => {
        void io.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
