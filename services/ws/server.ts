import { until } from '../../lib/time.ts';
import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { PrimaryLink } from '../common/cluster/hub.ts';
import type { ClusterableService } from '../common/cluster/main.ts';
import { createServiceApp } from '../common/http-app.ts';
import { resolveLimits, type ReferenceLimits } from '../common/limits.ts';
import { listen } from '../common/service-main.ts';
import { createTopicHub } from '../common/topic-hub.ts';

export interface WsServerOptions extends Partial<ReferenceLimits> {
  port: number;
  host: string;
  broadcastKey: string;
}

/**
 * Raw `ws` server with topics: the at-most-once baseline next to uWebSockets.js (services/uws/),
 * on the same protocol (services/common/topic-hub.ts, docs/running.md). Messages published while
 * a client is away are gone. Limits (buffered bytes, topics, name length) match the replay server's.
 */
export async function createWsServer(opts: WsServerOptions, link?: PrimaryLink): Promise<ClusterableService> {
  const limits = resolveLimits(opts);
  // Frames stay strings: ws encodes per send, as it always has here (the baseline's figures).
  const hub = createTopicHub<WebSocket, string>(
    limits,
    {
      encode: (frame) => frame,
      isOpen: (ws) => ws.readyState === 1,
      bufferedAmount: (ws) => ws.bufferedAmount,
      write: (ws, frame) => ws.send(frame),
      terminate: (ws) => ws.terminate(),
    },
    link,
  );

  const { app, close: closeApp } = createServiceApp({
    name: 'ws',
    broadcastKey: opts.broadcastKey,
    deliver: hub.deliver,
    stats: async () => ({ ...hub.stats(), ...(link ? { cluster: await link.clusterStats().catch(() => null) } : {}) }),
  });
  const server = createServer(app);
  const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false, clientTracking: true, maxPayload: limits.maxPayloadBytes });
  // Which process accepted the socket: shows the spread over workers (tests, benches).
  const pidHeader = `X-Rebound-Pid: ${process.pid}`;
  wss.on('headers', (headers) => headers.push(pidHeader));
  // ws re-emits the HTTP server's 'error' here, where no listener is a crash with a stack: a failed
  // bind is listen()'s to report (one coded line, service-main.ts), a failed accept the kernel's.
  wss.on('error', () => {});

  wss.on('connection', (ws) => {
    const me = hub.open(ws);
    // ws has no public drain event; its TCP socket's says the queue emptied.
    (ws as unknown as { _socket?: { on(e: 'drain', f: () => void): void } })._socket?.on('drain', me.progress.drained);
    ws.on('message', (raw, isBinary) => hub.frame(ws, isBinary ? undefined : raw.toString()));
    ws.on('error', () => {});
    ws.on('close', () => hub.close(ws));
  });

  const port = await listen(server, opts.port, opts.host);
  return {
    port,
    report: hub.report,
    async stop() {
      closeApp();
      for (const ws of wss.clients) ws.close(1012, 'server restart');
      // Clients that do not read never answer the close handshake: give the rest a grace period, then cut.
      await until(() => wss.clients.size === 0, limits.stopGraceMs, undefined, 10);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
