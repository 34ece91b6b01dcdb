import type { Server } from 'node:http';
import type { WebSocket } from 'ws';
import { MemoryBroker, type MemoryBrokerOptions } from './broker/memory.ts';
import type { Broker, BrokerStats } from './broker/types.ts';
import { Connection, disconnectFrames } from './connection/index.ts';
import { PingScheduler } from './connection/ping.ts';
import { TopicMembers, topicSweepMs } from './connection/topic-members.ts';
import type { TransportName } from './connection/transport.ts';
import { createCounters, type ConnectionContext, type ServerCounters } from './connection/types.ts';
import type { ReloadRequester } from './http/index.ts';
import { Hub } from './hub/index.ts';
import { resolveReplayOptions, type ReplayServerOptions } from './options.ts';
import { createStreamResolver } from './protocol/streams.ts';
import { restoreSidFrom } from './session/index.ts';
import { resolveTransport } from './transport/index.ts';
import type { ListenerHooks, UpgradeInfo } from './transport/types.ts';
import { createUwsListener } from './transport/uws.ts';
import { createWsListener } from './transport/ws.ts';

export { REPLAY_SERVER_OPTIONS, DEFAULT_REPLAY_SERVER_OPTIONS, type ReplayServerOptions } from './options.ts';

export interface ReplayServer {
  readonly options: ReplayServerOptions;
  /** The transport this server runs on (`options.transport` resolved: auto becomes uws or ws). */
  readonly transport: TransportName;
  /** The node:http server under the ws transport; undefined under uws (uWS serves HTTP itself). */
  readonly httpServer: Server | undefined;
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
  /**
   * A stop is coming (a rolling reload retires this worker next): stop accepting now, refuse new
   * upgrades and reloads, and make every HTTP answer say `Connection: close`; connections stay
   * until `stop`.
   */
  leave(): void;
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
  /** uws transport, cluster worker: bind the port with SO_REUSEPORT beside the other workers. */
  sharePort?: boolean;
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

/** Composition root: options → transport → broker → hub → connections → HTTP + WebSocket endpoint. */
export function createReplayServer(partial: Partial<ReplayServerOptions> = {}, deps: ReplayServerDeps = {}): ReplayServer {
  const opts = resolveReplayOptions(partial);
  const transport = resolveTransport(opts.transport);
  const ownsBroker = !deps.broker;
  const broker = deps.broker ?? new MemoryBroker(brokerOptions(opts));
  const counters = createCounters();
  let stopping = false;
  /** The listener's stop, once begun (`leave`, or `stop`): it stops once. */
  let listenerStop: Promise<void> | undefined;
  const stopAccepting = () => (listenerStop ??= listener.stopAccepting());
  const leaving = () => stopping || listenerStop !== undefined;
  let publishErrors = 0;
  let resyncs = 0;

  /** This process's own counters (a worker's share in cluster mode). */
  const stats = () => ({ pid: process.pid, connections: pings.size, subscriptions: hub.subscriptionCount, topicSubscriptions: hub.topicSubscriptionCount, streams: hub.streamCount, deliveries: hub.deliveries, publishErrors, resyncs, ...counters });
  /** /metrics: own counters plus the broker's, and in cluster mode every worker's sums. */
  const metrics = async () => {
    const b: Partial<BrokerStats> = await broker.stats().catch(() => ({}));
    const { cluster, ...brokerOnly } = b;
    // `transport`: which library this process serves with (a benchmark row must say what it measured).
    return { ...stats(), transport, broker: brokerOnly, ...(cluster ? { cluster } : {}) };
  };
  const hooks: ListenerHooks = {
    opts,
    http: { broadcastKey: opts.broadcastKey, maxBodyBytes: opts.maxBodyBytes, maxMessageBytes: opts.maxMessageBytes, broker, stats: metrics, onPublishError: () => publishErrors++, reload: deps.reload, stopping: leaving },
    stopping: leaving,
    open(sock: unknown, info: UpgradeInfo): Connection {
      counters.connectionsTotal++;
      // ?pi= may slow pings down only to maxPingIntervalSec: pings are what finds a dead peer.
      const piRaw = Number(info.query.get('pi'));
      const pingSec = Number.isInteger(piRaw) && piRaw >= 1 ? Math.min(piRaw, opts.maxPingIntervalSec) : opts.pingIntervalSec;
      const conn = new Connection(sock, info.ext, ctx);
      pings.add(conn, pingSec);
      return conn;
    },
    start(conn: Connection, info: UpgradeInfo): void {
      conn.start({ restoreSid: restoreSidFrom(info.restoreSidHeader, info.query), token: info.query.get('jid') ?? info.jidHeader });
    },
  };
  const listener = transport === 'uws' ? createUwsListener(hooks, deps.sharePort) : createWsListener(hooks, deps.webSocketClass);
  const { io } = listener;
  const topics = io.topics ? new TopicMembers<Connection>(io.topics, io.writable, topicSweepMs(opts.slowConsumerMs), Math.min(opts.maxBufferedBytes, opts.maxQueuedBytes)) : undefined;
  const hub = new Hub(io.encode, topics);
  // Piggyback: a due ping rides with the connection's next data frame (one write, not two).
  const pings = new PingScheduler<Connection>(Date.now, io.encode, true);
  const offMessages = broker.onMessages(io.deferFanOut ? (msgs) => hub.queue(msgs) : (msgs) => hub.deliver(msgs));
  // The broker lost live frames it cannot deliver in order (Redis feed gap): clients reconnect
  // (reconnect: true) and resume from their own positions through restore + history.
  const offResync =
    (broker as Broker).onResync?.((why) => {
      resyncs++;
      process.stderr.write(`replay: ${why}; clients resume by history\n`);
      for (const c of [...pings.all()]) c.disconnect('server_restart');
    }) ?? noop;

  const ctx: ConnectionContext = {
    opts,
    hub,
    broker,
    counters,
    io,
    topics,
    disconnectFrames: disconnectFrames(io),
    resolve: createStreamResolver({ publicStreams: opts.publicStreams, streamsSecret: opts.streamsSecret, streamsWhisper: opts.streamsWhisper, publicWhispers: opts.publicWhispers, maxStreamLength: 1024 }),
    get stopping() {
      return stopping;
    },
    closed: (conn) => pings.remove(conn),
  };

  let port = 0;
  const server: ReplayServer = {
    options: opts,
    transport,
    httpServer: listener.httpServer,
    broker,
    hub,
    counters,
    get port() {
      return port;
    },
    async listen(p = opts.port, host = opts.host) {
      port = await listener.listen(p, host);
      return port;
    },
    async stop(stopOpts = {}) {
      if (stopping) return;
      stopping = true;
      // Stop accepting first: with --workers new connections go to the other workers (a rolling
      // reload never drops a connect); every HTTP answer from now on says `Connection: close`.
      const closed = stopAccepting();
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
      topics?.stop();
      offMessages();
      offResync();
      listener.close();
      if (stopOpts.processExit) return; // the exit closes what is left
      for (const c of [...pings.all()]) io.terminate(c.sock);
      listener.dropAll();
      await closed;
      if (ownsBroker) await broker.close();
    },
    leave: () => void stopAccepting(),
    stats,
    connectionCount: () => pings.size,
  };
  return server;
}
