import { until } from '../../lib/time.ts';
import type { PrimaryLink } from '../common/cluster/hub.ts';
import type { ClusterableService } from '../common/cluster/main.ts';
import { createServiceRoutes } from '../common/http-app.ts';
import { portInUse } from '../common/service-main.ts';
import { resolveLimits, type ReferenceLimits } from '../common/limits.ts';
import { HARD_CAP_FACTOR } from '../common/slow-consumer.ts';
import { createTopicHub, type TopicClient } from '../common/topic-hub.ts';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { ReboundError } from '../../lib/errors.ts';
import { mountServiceRoutes } from './http.ts';
import { loadUws, type UwsSocket } from './load.ts';

export interface UwsServerOptions extends Partial<ReferenceLimits> {
  port: number;
  host: string;
  broadcastKey: string;
  /** Share the port with other processes (SO_REUSEPORT, the kernel spreads connections): `--workers`. */
  sharePort?: boolean;
}

/** Per-socket user data: whether uWS still holds it (a closed uWS socket throws on any call). */
interface Conn {
  open: boolean;
}

/**
 * uWebSockets.js server speaking exactly the raw ws server's protocol and HTTP surface (the
 * shared topic hub and routes): the benchmark's uWS row. At-most-once, no replay.
 *
 * Fan-out is one `send` per subscriber from the shared hub, not uWS's `app.publish`: the
 * slow-consumer rule (over `maxBufferedBytes` for `slowConsumerMs` without draining, or past 16x
 * at once) must be checked per socket before each send, exactly as for ws, and `publish` would
 * skip or close a slow receiver by its own rule. Each message is encoded once (a Buffer), so a
 * send copies bytes into uWS's corked socket buffer and converts nothing.
 */
export async function createUwsServer(opts: UwsServerOptions, link?: PrimaryLink): Promise<ClusterableService> {
  const loaded = loadUws();
  if (!loaded.ok) throw new ReboundError('RR_ERR_TARGET_UNAVAILABLE', loaded.reason);
  const { uws } = loaded;
  const limits = resolveLimits(opts);
  let stopping = false;

  type Ws = UwsSocket<Conn>;
  const hub = createTopicHub<Ws, Buffer>(
    limits,
    {
      encode: (frame) => Buffer.from(frame),
      isOpen: (ws) => ws.getUserData().open,
      bufferedAmount: (ws) => ws.getBufferedAmount(),
      write: (ws, frame) => void ws.send(frame, false),
      // close(): no close frame, the TCP connection is cut (ws's terminate()).
      terminate: (ws) => ws.close(),
    },
    link,
  );
  const routes = createServiceRoutes({
    name: 'uws',
    broadcastKey: opts.broadcastKey,
    deliver: hub.deliver,
    stats: async () => ({ ...hub.stats(), ...(link ? { cluster: await link.clusterStats().catch(() => null) } : {}) }),
  });

  // Each socket's hub state at hand for drain.
  const clients = new WeakMap<Ws, TopicClient>();
  const clientOf = (ws: Ws) => clients.get(ws);
  const app = uws.App();
  const pid = String(process.pid);
  app.ws<Conn>('/ws', {
    maxPayloadLength: limits.maxPayloadBytes,
    // The hub's own rule decides who is too slow; uWS must never drop a frame on its own (its
    // default 64 KiB would), so its bound sits past the hard cap plus one largest frame.
    maxBackpressure: Math.min(2 ** 31 - 1, limits.maxBufferedBytes * HARD_CAP_FACTOR * 2 + 64 * 1024 * 1024),
    closeOnBackpressureLimit: false,
    // No idle timeout: the ws server has none, and the runner's clients send nothing while they listen.
    idleTimeout: 0,
    sendPingsAutomatically: false,
    compression: 0,
    upgrade(res, req, context) {
      if (stopping) {
        res.writeStatus('503 Service Unavailable').end('stopping');
        return;
      }
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      // Which process accepted the socket: shows the spread over workers (as the ws server's header).
      res.writeStatus('101 Switching Protocols').writeHeader('X-Rebound-Pid', pid);
      res.upgrade<Conn>({ open: true }, key, protocol, extensions, context);
    },
    open(ws) {
      clients.set(ws, hub.open(ws));
    },
    message(ws, message, isBinary) {
      hub.frame(ws, isBinary ? undefined : Buffer.from(message).toString('utf8'));
    },
    drain(ws) {
      // Called as uWS flushes its backpressure; the rule's "drained" is an empty queue.
      if (ws.getBufferedAmount() === 0) clientOf(ws)?.progress.drained();
    },
    close(ws) {
      ws.getUserData().open = false;
      hub.close(ws);
    },
  });
  mountServiceRoutes(app, routes, { stopping: () => stopping });

  // uSockets sets SO_REUSEADDR and SO_REUSEPORT only on a concrete port, never on port 0 nor with
  // LIBUS_LISTEN_EXCLUSIVE_PORT; without SO_REUSEADDR on both sides, the TIME_WAIT connections a
  // stopped or killed server leaves on its port block the next bind for a minute (the avalanche
  // runner restarts a target on its port). So port 0 is first made a concrete free port, and one
  // process checks that nobody serves on its port, as a ws server's own bind would refuse.
  const bindPort = opts.port === 0 ? await freePort(opts.host) : opts.port;
  if (!opts.sharePort && opts.port !== 0) await assertPortFree(opts.host, bindPort);
  const listenSocket = await new Promise<unknown>((resolve, reject) => {
    app.listen(opts.host, bindPort, 0, (ls: unknown) => (ls ? resolve(ls) : reject(new ReboundError('RR_ERR_SERVICE_START', `uWS could not listen on ${opts.host}:${bindPort}`))));
  });
  const port = uws.us_socket_local_port(listenSocket);

  return {
    port,
    report: hub.report,
    async stop() {
      stopping = true;
      uws.us_listen_socket_close(listenSocket);
      routes.close();
      // end() sends the goodbye (1012) and runs the close handler at once; a socket that does not
      // read keeps its TCP connection until uWS gives up on it or the process exits.
      for (const ws of [...hub.sockets()]) ws.end(1012, 'server restart');
      await until(() => hub.size === 0, limits.stopGraceMs, undefined, 10);
      for (const ws of [...hub.sockets()]) ws.close();
    },
  };
}

/**
 * Rejects when something already accepts connections on host:port. A bind probe cannot tell: the
 * connections a killed uWS server leaves behind (closing, bound with SO_REUSEPORT and without
 * SO_REUSEADDR) make any other bind fail while uWS's own shared bind still succeeds.
 */
export function assertPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: host === '::' || host === '0.0.0.0' ? '127.0.0.1' : host, port });
    sock.setTimeout(1000, () => {
      sock.destroy();
      resolve(); // nothing answered: nobody serves there
    });
    sock.once('connect', () => {
      sock.destroy();
      reject(portInUse(host, port));
    });
    sock.once('error', () => resolve());
  });
}

/** A port free on `host` now (the kernel's pick for a bind of our own, released at once). */
export const freePort = (host: string) =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });

/**
 * The one port N uWS workers all bind (SO_REUSEPORT; uWS does not use node:cluster's shared
 * handles): port 0 made one free port, a given port checked free first. A second cluster on a
 * port in use would otherwise share it with the first, each taking part of its connections.
 */
export async function portForWorkers(host: string, port: number): Promise<number> {
  if (port === 0) return freePort(host);
  await assertPortFree(host, port);
  return port;
}

/**
 * Whether Linux hands the connections queued on a closing SO_REUSEPORT listener to the others in
 * its group (net.ipv4.tcp_migrate_req, Linux 5.14+) instead of resetting them: what a worker that
 * stops, e.g. in a rolling reload, does to connections it had not accepted yet.
 */
export function acceptQueueMigration(): 'on' | 'off' | 'unknown' {
  try {
    const v = readFileSync('/proc/sys/net/ipv4/tcp_migrate_req', 'utf8').trim();
    return v === '1' ? 'on' : v === '0' ? 'off' : 'unknown';
  } catch {
    return 'unknown';
  }
}
