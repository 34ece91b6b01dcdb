import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, WebSocket } from 'ws';
import { LeanServerSocket } from './protocol/lean-ws.ts';
import { listen } from '../common/service-main.ts';
import { MemoryBroker, type MemoryBrokerOptions } from './broker/memory.ts';
import type { Broker, BrokerStats } from './broker/types.ts';
import { Connection } from './connection/index.ts';
import { PingScheduler } from './connection/ping.ts';
import { createCounters, type ConnectionContext, type ServerCounters } from './connection/types.ts';
import { createReplayHttp, type ReloadRequester } from './http/index.ts';
import { Hub } from './hub/index.ts';
import { resolveReplayOptions, type ReplayServerOptions } from './options.ts';
import { createStreamResolver } from './protocol/streams.ts';
import { SUBPROTOCOL_BASE, SUBPROTOCOL_EXT } from './protocol/types.ts';
import { restoreSidFrom } from './session/index.ts';

export { REPLAY_SERVER_OPTIONS, DEFAULT_REPLAY_SERVER_OPTIONS, type ReplayServerOptions } from './options.ts';

export interface ReplayServer {
  readonly options: ReplayServerOptions;
  readonly httpServer: Server;
  readonly broker: Broker;
  readonly hub: Hub;
  readonly counters: ServerCounters;
  /** Bound port (after `listen`). */
  readonly port: number;
  listen(port?: number, host?: string): Promise<number>;
  /**
   * Graceful stop: every client gets `disconnect server_restart`, leftovers are terminated after
   * `stopGraceMs`. With `processExit` (the process exits right after, as under serviceMain) the
   * leftover sockets are left for the kernel to close instead of being destroyed one by one.
   */
  stop(opts?: { processExit?: boolean }): Promise<void>;
  stats(): Record<string, unknown>;
  /** Live connection count. */
  connectionCount(): number;
}

export interface ReplayServerDeps {
  /** Storage/fan-out; a MemoryBroker from the options by default. Owned (closed on stop) only when defaulted. */
  broker?: Broker;
  /** Cluster worker: `POST /_admin/reload` asks the primary for a rolling reload (see cluster/reload.ts). */
  reload?: ReloadRequester;
  /** The WebSocket class ws's server hands each socket to: LeanServerSocket, or ws's own to measure what it costs (bench/replay-conn-heap.ts). */
  webSocketClass?: typeof WebSocket;
}

/** The memory broker's share of the server options (one place, used by the single process and the cluster primary). */
export function brokerOptions(opts: ReplayServerOptions): MemoryBrokerOptions {
  return {
    historyLimit: opts.historyLimit,
    historyTtlSec: opts.historyTtlSec,
    idempotencyWindowSec: opts.idempotencyWindowSec,
    historyStreamMaxBytes: opts.historyStreamMaxBytes,
    historyMaxBytes: opts.historyMaxBytes,
    maxStreams: opts.maxStreams,
    sessionTtlSec: opts.sessionTtlSec,
    maxSessions: opts.maxSessions,
    maxSessionStoreBytes: opts.maxSessionStoreBytes,
  };
}

const noop = () => {};
/** Graceful stop must end well inside serviceMain's 5 s hard deadline. */
const STOP_BUDGET_MS = 3500;
const pickProtocol = (offered: Set<string>): string | false => (offered.has(SUBPROTOCOL_EXT) ? SUBPROTOCOL_EXT : offered.has(SUBPROTOCOL_BASE) ? SUBPROTOCOL_BASE : false);

/** Composition root: options → broker → hub → connections → HTTP + WebSocket endpoint. */
export function createReplayServer(partial: Partial<ReplayServerOptions> = {}, deps: ReplayServerDeps = {}): ReplayServer {
  const opts = resolveReplayOptions(partial);
  const ownsBroker = !deps.broker;
  const broker = deps.broker ?? new MemoryBroker(brokerOptions(opts));
  const hub = new Hub();
  const counters = createCounters();
  const pings = new PingScheduler<Connection>();
  const offMessages = broker.onMessages((msgs) => hub.deliver(msgs));
  let publishErrors = 0;
  let resyncs = 0;
  // The broker lost live frames it cannot deliver in order (Redis feed gap): clients reconnect
  // (reconnect: true) and resume from their own positions through restore + history.
  const offResync =
    (broker as Broker).onResync?.((why) => {
      resyncs++;
      process.stderr.write(`replay: ${why}; clients resume by history\n`);
      for (const c of [...pings.all()]) c.disconnect('server_restart');
    }) ?? noop;
  let stopping = false;

  const ctx: ConnectionContext = {
    opts,
    hub,
    broker,
    counters,
    resolve: createStreamResolver({ publicStreams: opts.publicStreams, streamsSecret: opts.streamsSecret, streamsWhisper: opts.streamsWhisper, publicWhispers: opts.publicWhispers, maxStreamLength: 1024 }),
    get stopping() {
      return stopping;
    },
    closed: (conn) => pings.remove(conn, conn.pingSec),
  };

  /** This process's own counters (a worker's share in cluster mode). */
  const stats = () => ({ pid: process.pid, connections: pings.size, subscriptions: hub.subscriptionCount, streams: hub.streamCount, deliveries: hub.deliveries, publishErrors, resyncs, ...counters });
  /** /metrics: own counters plus the broker's, and in cluster mode every worker's sums. */
  const metrics = async () => {
    const b: Partial<BrokerStats> = await broker.stats().catch(() => ({}));
    const { cluster, ...brokerOnly } = b;
    return { ...stats(), broker: brokerOnly, ...(cluster ? { cluster } : {}) };
  };
  const { app, close: closeApp } = createReplayHttp({ broadcastKey: opts.broadcastKey, maxBodyBytes: opts.maxBodyBytes, maxMessageBytes: opts.maxMessageBytes, broker, stats: metrics, onPublishError: () => publishErrors++, reload: deps.reload, stopping: () => stopping });
  const httpServer = createServer(app);
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: opts.maxPayloadBytes,
    handleProtocols: pickProtocol,
    WebSocket: deps.webSocketClass ?? LeanServerSocket,
  });

  // Which process accepted the socket: lets cluster tests and benches see the worker spread.
  const pidHeader = `X-Rebound-Pid: ${process.pid}`;
  wss.on('headers', (headers) => headers.push(pidHeader));

  const onConnection = (ws: WebSocket, req: IncomingMessage, query: URLSearchParams) => {
    counters.connectionsTotal++;
    // ?pi= may slow pings down only to maxPingIntervalSec: pings are what finds a dead peer.
    const piRaw = Number(query.get('pi'));
    const pingSec = Number.isInteger(piRaw) && piRaw >= 1 ? Math.min(piRaw, opts.maxPingIntervalSec) : opts.pingIntervalSec;
    const conn = new Connection(ws, ws.protocol === SUBPROTOCOL_EXT, pingSec, ctx);
    pings.add(conn, pingSec);
    const jid = req.headers['x-jid'];
    conn.start({
      restoreSid: restoreSidFrom(req.headers['x-anycable-restore-sid'], query),
      token: query.get('jid') ?? (Array.isArray(jid) ? jid[0] : jid),
    });
  };

  httpServer.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // A module-level listener: a closure here would keep this scope (req, query) alive per socket.
    socket.on('error', noop);
    // Path and query by hand: a full WHATWG URL per upgrade is garbage we do not need.
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const pathname = q < 0 ? raw : raw.slice(0, q);
    if (pathname !== opts.path) return void socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
    if (stopping) return void socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
    wss.handleUpgrade(req, socket, head, (ws) => {
      socket.off('error', noop); // ws has its own listener now
      onConnection(ws, req, query);
    });
  });

  let port = 0;
  const server: ReplayServer = {
    options: opts,
    httpServer,
    broker,
    hub,
    counters,
    get port() {
      return port;
    },
    async listen(p = opts.port, host = opts.host) {
      await listen(httpServer, p, host);
      const addr = httpServer.address();
      port = typeof addr === 'object' && addr ? addr.port : 0;
      return port;
    },
    async stop(stopOpts = {}) {
      if (stopping) return;
      stopping = true;
      // Stop accepting first: with --workers the primary then hands new connections to the other
      // workers (a rolling reload never drops a connect). net.Server's close, not http.Server's:
      // the latter also drops idle keep-alive sockets at once, racing a client that is just
      // sending on one; instead every answer from now on says `Connection: close`.
      const closed = new Promise<void>((r) => NetServer.prototype.close.call(httpServer, () => r()));
      // Bounded whatever the load: frames first (stop sending at half the budget), then the
      // grace period for clean closes, then terminate whatever is left.
      const t0 = Date.now();
      const budgetEnd = t0 + STOP_BUDGET_MS;
      let n = 0;
      for (const c of pings.all()) {
        c.shutdown(stopOpts.processExit === true);
        if (++n % 500 === 0 && Date.now() - t0 > STOP_BUDGET_MS / 2) break;
      }
      const graceEnd = Math.min(Date.now() + opts.stopGraceMs, budgetEnd);
      while (pings.size > 0 && Date.now() < graceEnd && !stopOpts.processExit) await new Promise((r) => setTimeout(r, 10));
      if (stopOpts.processExit) await new Promise((r) => setTimeout(r, Math.max(0, graceEnd - Date.now())));
      pings.stop();
      offMessages();
      offResync();
      closeApp();
      if (stopOpts.processExit) return; // the exit closes what is left
      for (const c of [...pings.all()]) c.ws.terminate();
      httpServer.closeAllConnections();
      await closed;
      if (ownsBroker) await broker.close();
    },
    stats,
    connectionCount: () => pings.size,
  };
  return server;
}
