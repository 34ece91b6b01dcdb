import { ReboundError } from '../../../lib/errors.ts';
import { loadUws, type UwsApp, type UwsSocket } from '../../uws/load.ts';
import { assertPortFree, freePort } from '../../uws/server.ts';
import { Connection } from '../connection/index.ts';
import type { SocketOps, TopicOps } from '../connection/transport.ts';
import { mountReplayHttp } from '../http/index.ts';
import { pickProtocol, SUBPROTOCOL_EXT } from '../protocol/types.ts';
import type { ListenerHooks, TransportListener, UpgradeInfo } from './types.ts';

/**
 * The fields uWS keeps for us on each socket (user data is copied onto the socket object, so
 * `getUserData()` is the socket itself). `c`: the upgrade's parts until `open`, then the
 * Connection, undefined once uWS closed it (any call on a closed uWS socket throws). `k`: the
 * batch in progress, and `p`: fields, not maps or sets keyed by socket, because every delivery
 * reads them (a hash lookup per delivery, measured in the fan-out's profile).
 */
interface User {
  c: UpgradeInfo | Connection | undefined;
  k: Corked | undefined;
  /** Pressured: the last send left bytes in uWS's buffer (see `sendOne`). */
  p: boolean;
}
type Ws = UwsSocket<User> & User;

/** A batch in progress (`cork` … `uncork`): frames collected, sent inside one uWS cork. */
interface Corked {
  depth: number;
  bytes: number;
  frames: Buffer[];
}
/** Outbox waiting for a socket to drain (rare: only sockets over maxBufferedBytes). */
const drainWaiters = new WeakMap<Ws, () => void>();

/**
 * `p`: the socket's last send left bytes in uWS's buffer. uWS's send answers SUCCESS (1) only
 * when nothing is left buffered, so only such a socket is asked getBufferedAmount (a native call
 * on every delivery otherwise); the mark clears once its buffer is empty. Frames sent inside a
 * cork may answer SUCCESS and still leave bytes behind at the uncork: the next send then answers
 * BACKPRESSURE, so at most one more frame passes the connection's check (the one a check
 * before writing always lets over the mark).
 */
const SUCCESS = 1;
/** True when uWS kept nothing buffered; else the socket is marked pressured. */
const sendOne = (ws: Ws, frame: Buffer): boolean => {
  if (ws.send(frame, false) === SUCCESS) return true;
  ws.p = true;
  return false;
};
const sendAll = (ws: Ws, frames: readonly Buffer[]) => {
  for (const f of frames) sendOne(ws, f);
};
const bufferedAmount = (ws: Ws): number => {
  if (!ws.p) return 0;
  const n = ws.getBufferedAmount();
  if (n === 0) ws.p = false;
  return n;
};

/**
 * uWebSockets.js sockets. uWS frames each message itself, so a shared frame is the payload bytes
 * (copied once into uWS's buffer per send). Inside uWS's own callbacks (a client's message) the
 * socket is already corked, so the replies to one read leave in one write; a batch from the
 * fan-out or a history page is collected here and sent inside one `cork`.
 */
export const uwsOps: SocketOps<Ws> = {
  name: 'uws',
  deferFanOut: true,
  encode: (payload) => Buffer.from(payload, 'utf8'),
  writable: (ws) => ws.c !== undefined,
  write(ws, frame) {
    const batch = ws.k;
    if (batch !== undefined) {
      batch.frames.push(frame);
      batch.bytes += frame.length;
      return;
    }
    sendOne(ws, frame);
  },
  sendNow: sendOne,
  buffered: (ws) => (ws.c === undefined ? 0 : bufferedAmount(ws) + (ws.k?.bytes ?? 0)),
  awaitDrain(ws, cb) {
    if (ws.c !== undefined && ws.getBufferedAmount() > 0) drainWaiters.set(ws, cb);
    else setImmediate(cb);
  },
  cancelDrain(ws, cb) {
    if (drainWaiters.get(ws) === cb) drainWaiters.delete(ws);
  },
  cork(ws) {
    const batch = ws.k;
    if (batch) batch.depth++;
    else ws.k = { depth: 1, bytes: 0, frames: [] };
  },
  uncork(ws) {
    const batch = ws.k;
    if (!batch || --batch.depth > 0) return;
    ws.k = undefined;
    if (batch.frames.length === 0 || ws.c === undefined) return;
    if (batch.frames.length === 1) sendOne(ws, batch.frames[0]!);
    else ws.cork(() => sendAll(ws, batch.frames));
  },
  // uWS v20.30 cannot stop reading a socket: the early-frame bounds (connection/index.ts) apply alone.
  pause: () => {},
  resume: () => {},
  close(ws, code, frame) {
    if (ws.c === undefined) return;
    const batch = ws.k;
    ws.k = undefined;
    ws.cork(() => {
      if (batch) sendAll(ws, batch.frames); // what was sent before the goodbye goes first
      ws.send(frame, false);
      ws.end(code);
    });
  },
  terminate(ws) {
    if (ws.c !== undefined) ws.close();
  },
};

/**
 * uWS topics for the hub's groups (hub/subscription.ts Group): a stored frame is published once
 * per group and uWS writes it to every member in native code, each socket's frames of the loop
 * iteration in one write. What stays one by one in JS is what differs per connection (positions
 * during a hand-over, exclusion, holds). uWS frees a socket's subscriber state when it leaves its
 * last topic, and with it the frames published to it and not yet written (seen on v20.30), so
 * every member also holds ANCHOR_TOPIC until it closes (connection/topic-members.ts).
 */
export function uwsTopics(app: Pick<UwsApp, 'publish'>): TopicOps<Ws> {
  return {
    publish: (topic, frame) => void app.publish(topic, frame, false),
    subscribe: (ws, topic) => void ws.subscribe(topic),
    unsubscribe: (ws, topic) => void ws.unsubscribe(topic),
    buffered: (ws) => ws.getBufferedAmount(),
  };
}

/**
 * The uWS transport: uWS's own HTTP (the shared routes' uWS mount) and WebSocket upgrade. With
 * `sharePort` (--workers) each worker binds the same port with SO_REUSEPORT (as services/uws).
 */
export function createUwsListener(h: ListenerHooks, sharePort = false): TransportListener {
  const loaded = loadUws();
  if (!loaded.ok) throw new ReboundError('RR_ERR_TARGET_UNAVAILABLE', loaded.reason);
  const { uws } = loaded;
  const { opts } = h;
  const app = uws.App();
  const pid = String(process.pid);
  app.ws<User>(opts.path, {
    maxPayloadLength: opts.maxPayloadBytes,
    // The connection's own rule (Outbox: maxBufferedBytes, maxQueuedBytes, slowConsumerMs)
    // decides who is too slow; uWS must never skip a frame by its own (64 KiB by default): past
    // this bound (frames published to a topic member faster than the sweep sees it,
    // connection/topic-members.ts) uWS cuts the connection instead, and the client resumes from
    // what it has.
    maxBackpressure: Math.min(2 ** 31 - 1, opts.maxBufferedBytes + opts.maxQueuedBytes + 64 * 1024 * 1024),
    closeOnBackpressureLimit: true,
    // Pings are the server's own AnyCable frames (connection/ping.ts); ws has no idle timeout either.
    idleTimeout: 0,
    sendPingsAutomatically: false,
    compression: 0,
    upgrade(res, req, context) {
      if (h.stopping()) {
        res.writeStatus('503 Service Unavailable').end('', true);
        return;
      }
      // uWS's request is valid only inside this call: read what the connection needs now.
      const offered = new Set(
        req
          .getHeader('sec-websocket-protocol')
          .split(',')
          .map((p) => p.trim()),
      );
      const protocol = pickProtocol(offered) || '';
      const info: UpgradeInfo = {
        ext: protocol === SUBPROTOCOL_EXT,
        query: new URLSearchParams(req.getQuery() ?? ''),
        restoreSidHeader: req.getHeader('x-anycable-restore-sid') || undefined,
        jidHeader: req.getHeader('x-jid') || undefined,
      };
      // Which process accepted the socket (as the ws transport's header).
      res.writeStatus('101 Switching Protocols').writeHeader('X-Rebound-Pid', pid);
      res.upgrade<User>({ c: info, k: undefined, p: false }, req.getHeader('sec-websocket-key'), protocol, req.getHeader('sec-websocket-extensions'), context);
    },
    open(sock) {
      const ws = sock as Ws;
      const info = ws.c as UpgradeInfo;
      const conn = h.open(ws, info);
      ws.c = conn;
      h.start(conn, info);
    },
    message(sock, message, isBinary) {
      const c = (sock as Ws).c;
      if (c instanceof Connection) c.receive(message, isBinary);
    },
    drain(sock) {
      const ws = sock as Ws;
      const cb = drainWaiters.get(ws);
      if (cb === undefined) return;
      drainWaiters.delete(ws);
      cb();
    },
    close(sock, code, message) {
      const ws = sock as Ws;
      const c = ws.c;
      ws.c = undefined;
      // uWS cuts a client that breaks the protocol (too big, not UTF-8, bad frame) without a close
      // frame: 1006 with its reason ("Received too big message"); a plain TCP drop has none.
      ws.k = undefined;
      drainWaiters.delete(ws);
      if (c instanceof Connection) {
        if (code === 1006 && message.byteLength > 0) c.socketError();
        c.cleanup(); // aborts an outbox: its waiters see the connection closing
      }
    },
  });
  const http = mountReplayHttp(app, h.http);

  let listenSocket: unknown;
  return {
    io: { ...uwsOps, topics: uwsTopics(app) } as SocketOps,
    httpServer: undefined,
    async listen(port, host) {
      // uSockets sets SO_REUSEADDR/SO_REUSEPORT only on a concrete port: port 0 becomes one
      // first, and a single process checks nobody serves there (see services/uws/server.ts).
      const bindPort = port === 0 ? await freePort(host) : port;
      if (!sharePort && port !== 0) await assertPortFree(host, bindPort);
      listenSocket = await new Promise<unknown>((resolve, reject) => {
        app.listen(host, bindPort, 0, (ls: unknown) => (ls ? resolve(ls) : reject(new ReboundError('RR_ERR_SERVICE_START', `uWS could not listen on ${host}:${bindPort}`))));
      });
      return uws.us_socket_local_port(listenSocket);
    },
    async stopAccepting() {
      if (listenSocket !== undefined) uws.us_listen_socket_close(listenSocket);
      listenSocket = undefined;
    },
    close: http.close,
    // uWS keeps no idle HTTP connection past the process; its WebSockets are cut by the caller.
    dropAll: () => {},
  };
}
