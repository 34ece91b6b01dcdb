import { io, type Socket } from 'socket.io-client';
import { broadcastPublish, ClientBase, defineTarget, LeanClient, LeanStage, parseJson, type ClientOptions, type LeanProtocol, type TargetClient } from './contract.ts';
import { socketIoBackoff } from './reconnect.ts';
import { seedSocketIoBackoff } from './seeded-jitter.ts';

/**
 * socket.io-client adapter. `default`: reconnection off, the runner reconnects with a fresh
 * socket after the offline floor (the benchmark's MIN_OFFLINE_MS = 2 s). `csr`: the library
 * reconnects itself (`default`: 2 s ±50%, max 5 s; `tuned`: the same backoff as every library
 * client, see reconnect.ts) and Connection State Recovery may restore the session;
 * `socket.recovered` tells us whether it did. Whispers: `socket.emit("whisper", room, payload)`;
 * the reference server re-emits `whisper` to the room without the sender (the benchmark's convention).
 */
class SocketIoClient extends ClientBase implements TargetClient {
  private socket: Socket | undefined;

  constructor(opts: ClientOptions, private readonly mode: 'default' | 'csr') {
    super(opts);
  }

  connect(): Promise<void> {
    if (this.state === 'closed') return Promise.reject(new Error('client closed'));
    this.state = 'connecting';
    const socket = io(this.opts.url, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: this.mode === 'csr',
      ...socketIoBackoff(this.opts.reconnectStrategy, this.opts.reconnectBaseMs),
      timeout: 20_000,
      ...(this.opts.localAddress ? { localAddress: this.opts.localAddress } : {}),
    } as Parameters<typeof io>[1]);
    // One seed, one reconnect schedule: the Manager's jitter comes from the run's stream for this client.
    if (this.mode === 'csr' && this.opts.reconnectRng) seedSocketIoBackoff(socket.io, this.opts.reconnectRng);
    this.socket = socket;
    socket.on('message', (data: unknown) => {
      if (typeof data === 'string') this.events.emit('message', { data, at: Date.now() });
    });
    socket.on('whisper', (payload: unknown) => this.events.emit('message', { data: typeof payload === 'string' ? payload : JSON.stringify(payload), at: Date.now() }));
    return new Promise<void>((resolve, reject) => {
      // Only the first outcome settles connect() (a settled promise ignores the rest); after it,
      // a connect error no longer closes the socket.
      let first = true;
      socket.on('connect', () => {
        // `recovered` is unset (not false) on a server without CSR: the event promises a boolean.
        const resumed = socket.recovered === true;
        const announce = () => {
          this.state = 'open';
          this.events.emit('connected', { resumed, attempt: this.attempt++ });
          first = false;
          resolve();
        };
        if (resumed) return announce(); // rooms came back with the session
        socket.timeout(10_000).emit('subscribe', this.opts.stream, (err: Error | null, reply: { ok?: boolean } | undefined) => {
          if (err || !reply?.ok) {
            const e = err ?? new Error('subscribe rejected');
            first = false;
            reject(e);
            this.events.emit('error', e);
            return;
          }
          announce();
        });
      });
      socket.on('connect_error', (err) => {
        if (first && this.mode === 'default') {
          first = false;
          this.state = 'offline';
          socket.close();
          reject(err);
        }
        if (this.socket === socket) this.events.emit('error', err);
      });
      socket.on('disconnect', (reason) => {
        if (this.socket === socket) this.wentAway(reason === 'io server disconnect' || reason === 'transport close' ? 'server_closed' : 'transport_error', reason);
      });
    });
  }

  drop(): boolean {
    const socket = this.socket;
    // What engine.io-client keeps of the Node `ws` socket; not in its public types.
    const ws = (socket?.io.engine as unknown as { transport?: { ws?: { terminate?: () => void } } } | undefined)?.transport?.ws;
    if (!socket || this.state !== 'open' || typeof ws?.terminate !== 'function') return false;
    this.state = 'offline';
    if (this.mode === 'default') this.socket = undefined;
    this.events.emit('disconnected', { reason: 'dropped' });
    ws.terminate();
    if (this.mode === 'default') socket.close();
    return true;
  }

  reconnect(): Promise<void> {
    if (this.mode === 'csr') return Promise.resolve(); // the library does it
    this.socket?.close();
    return this.connect();
  }

  close(): void {
    this.state = 'closed';
    this.socket?.close();
    this.socket = undefined;
  }

  whisper(data: Record<string, unknown>): void {
    this.socket?.emit('whisper', this.opts.stream, data);
  }
}

/**
 * The lean client's wire: Socket.IO 4 (engine.io v4) over a raw WebSocket: `0{...}` open → send
 * `40` (CONNECT) → `40{sid}` → emit `subscribe` with ack id 0 → `430[{"ok":true}]`. Engine pings
 * (`2`) are answered with `3`, or the server drops us after pingInterval + pingTimeout. The CSR
 * target speaks the same wire (recovery matters only to a client that resumes).
 */
const leanSocketIo: LeanProtocol = {
  url: (base) => `${base.replace(/^http/, 'ws').replace(/\/+$/, '')}/socket.io/?EIO=4&transport=websocket`,
  onMessage(p, stream, send) {
    if (p[0] === 0x32 && p.length === 1) {
      send('3');
      return undefined;
    }
    const t = p.toString();
    if (t.startsWith('0{')) {
      send('40');
      return undefined;
    }
    if (t.startsWith('40')) {
      send(`420${JSON.stringify(['subscribe', stream])}`);
      return { stage: LeanStage.Welcomed };
    }
    // A namespace DISCONNECT (41) or an engine.io close (1): the server's own goodbye.
    if (t === '41' || t.startsWith('41/')) return { notice: 'socket.io disconnect (41)' };
    if (t === '1') return { notice: 'engine.io close (1)' };
    if (t.startsWith('44')) return { error: `socket.io connect refused: ${t.slice(2)}` };
    if (t.startsWith('430')) {
      const reply = parseJson(t.slice(3));
      return Array.isArray(reply) && (reply[0] as { ok?: unknown } | null | undefined)?.ok ? { stage: LeanStage.Subscribed } : { error: 'subscribe rejected' };
    }
    if (t.startsWith('42')) {
      const ev = parseJson(t.slice(2));
      if (Array.isArray(ev) && ev[0] === 'message' && ev[1] !== undefined) return { data: typeof ev[1] === 'string' ? ev[1] : JSON.stringify(ev[1]) };
    }
    return undefined;
  },
};

export const socketIoTarget = defineTarget({
  name: 'socketio',
  description: 'Socket.IO 4, no recovery; manual reconnect after a 2 s offline floor',
  offlineFloorMs: 2000,
  capabilities: { reconnect: 'manual', resume: 'none', offsets: false, epochs: false, whispers: true, library: 'socket.io-client' },
  service: { name: 'socketio', args: ['--mode', 'default'] },
  createClient: (opts) => new SocketIoClient(opts, 'default'),
  createLeanClient: (opts) => new LeanClient(opts, leanSocketIo),
  publish: broadcastPublish,
});

export const socketIoCsrTarget = defineTarget({
  name: 'socketio-csr',
  description: 'Socket.IO 4 + Connection State Recovery (in-memory adapter); library reconnect',
  offlineFloorMs: 0,
  capabilities: { reconnect: 'library', resume: 'session', offsets: false, epochs: false, whispers: true, library: 'socket.io-client' },
  service: { name: 'socketio', args: ['--mode', 'csr'] },
  noWorkers: '@socket.io/cluster-adapter does not support Connection State Recovery, so the server refuses --workers with --mode csr',
  createClient: (opts) => new SocketIoClient(opts, 'csr'),
  createLeanClient: (opts) => new LeanClient(opts, leanSocketIo),
  publish: broadcastPublish,
});
