import { createServer, type IncomingMessage } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { listen } from '../../common/service-main.ts';
import type { Connection } from '../connection/index.ts';
import type { SocketOps } from '../connection/transport.ts';
import { createReplayHttp } from '../http/index.ts';
import { LeanServerSocket } from '../protocol/lean-ws.ts';
import { socketOf, textFrame } from '../protocol/wsframe.ts';
import { pickProtocol, SUBPROTOCOL_EXT } from '../protocol/types.ts';
import type { ListenerHooks, TransportListener } from './types.ts';

const CONN = Symbol('rebound.connection');
type Tagged = WebSocket & { [CONN]?: Connection };

// Shared listeners (called with `this` = the socket) instead of three closures per connection.
function onMessage(this: Tagged, data: unknown, isBinary: boolean): void {
  this[CONN]?.receive(data, isBinary);
}
function onError(this: Tagged): void {
  this[CONN]?.socketError();
}
function onClose(this: Tagged): void {
  const conn = this[CONN];
  this[CONN] = undefined;
  conn?.cleanup();
}
const noop = () => {};

/**
 * Sockets corked for the rest of this tick: every frame a connection gets in one tick (replies to
 * the commands of one read, a delivery batch) leaves in one writev, uncorked together on the next
 * tick. An array, not a Set: a socket is pushed once, when its cork count goes from 0 to 1.
 */
let tickCorked: Socket[] = [];
function uncorkTick(): void {
  const socks = tickCorked;
  tickCorked = [];
  for (const s of socks) s.uncork();
}

/**
 * ws (with the replay server's own frame reader, protocol/lean-ws.ts) over node:net: frames are
 * complete WebSocket frames (protocol/wsframe.ts) written straight to the TCP socket.
 */
export const wsOps: SocketOps<WebSocket> = {
  name: 'ws',
  // Writes inside a callback are corked until the next tick anyway (tickCorked).
  deferFanOut: false,
  encode: textFrame,
  writable: (ws) => ws.readyState === 1 && socketOf(ws) !== undefined,
  write(ws, frame) {
    const sock = socketOf(ws)!;
    if (sock.writableCorked === 0) {
      sock.cork();
      if (tickCorked.push(sock) === 1) process.nextTick(uncorkTick);
    }
    sock.write(frame);
  },
  buffered: (ws) => socketOf(ws)?.writableLength ?? 0,
  awaitDrain(ws, cb) {
    const sock = socketOf(ws);
    // 'drain' only follows a write that returned false; below the stream's own mark, poll once.
    if (sock?.writableNeedDrain) sock.once('drain', cb);
    else setImmediate(cb);
  },
  cancelDrain: (ws, cb) => void socketOf(ws)?.off('drain', cb),
  cork: (ws) => socketOf(ws)?.cork(),
  uncork: (ws) => socketOf(ws)?.uncork(),
  pause: (ws) => ws.pause(),
  resume: (ws) => ws.resume(),
  close(ws, code, frame) {
    const sock = socketOf(ws)!;
    sock.cork();
    sock.write(frame);
    ws.close(code);
    sock.uncork();
  },
  terminate: (ws) => ws.terminate(),
};

/** The ws transport: node:http (express for the HTTP surface) and ws's handshake on `opts.path`. */
export function createWsListener(h: ListenerHooks, webSocketClass: typeof WebSocket = LeanServerSocket): TransportListener {
  const { opts } = h;
  const { app, close: closeApp } = createReplayHttp(h.http);
  const httpServer = createServer(app);
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: opts.maxPayloadBytes,
    handleProtocols: (offered) => pickProtocol(offered),
    WebSocket: webSocketClass,
  });

  // Which process accepted the socket: lets cluster tests and benches see the worker spread.
  const pidHeader = `X-Rebound-Pid: ${process.pid}`;
  wss.on('headers', (headers) => headers.push(pidHeader));

  httpServer.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // A module-level listener: a closure here would keep this scope (req, query) alive per socket.
    socket.on('error', noop);
    // Path and query by hand: a full WHATWG URL per upgrade is garbage we do not need.
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const pathname = q < 0 ? raw : raw.slice(0, q);
    if (pathname !== opts.path) return void socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
    if (h.stopping()) return void socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
    wss.handleUpgrade(req, socket, head, (ws) => {
      socket.off('error', noop); // ws has its own listener now
      const restore = req.headers['x-anycable-restore-sid'];
      const jid = req.headers['x-jid'];
      const info = {
        ext: ws.protocol === SUBPROTOCOL_EXT,
        query,
        restoreSidHeader: Array.isArray(restore) ? restore[0] : restore,
        jidHeader: Array.isArray(jid) ? jid[0] : jid,
      };
      const conn = h.open(ws, info);
      (ws as Tagged)[CONN] = conn;
      ws.on('message', onMessage);
      ws.on('error', onError);
      ws.on('close', onClose);
      h.start(conn, info);
    });
  });

  return {
    io: wsOps as SocketOps,
    httpServer,
    async listen(port, host) {
      await listen(httpServer, port, host);
      const addr = httpServer.address();
      return typeof addr === 'object' && addr ? addr.port : 0;
    },
    // net.Server's close, not http.Server's: the latter also drops idle keep-alive sockets at
    // once, racing a client that is just sending on one; instead every answer from now on says
    // `Connection: close`.
    stopAccepting: () => new Promise<void>((r) => NetServer.prototype.close.call(httpServer, () => r())),
    close: closeApp,
    dropAll: () => httpServer.closeAllConnections(),
  };
}
