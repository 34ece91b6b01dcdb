import { createCable, type Channel } from '@anycable/core';
import WebSocket from 'ws';
import { io, type Socket } from 'socket.io-client';
import { Emitter } from '../../lib/emitter.ts';
import { cableUrl } from './anycable.ts';
import type { ClientEvents, ClientOptions, TargetClient } from './types.ts';

/**
 * Client-to-client messages ("whispers") behind the one TargetClient interface: a whisper client
 * is a TargetClient subscribed to its room (`opts.stream`) that can also `whisper(data)` to the
 * room's other members; whispers from others arrive as `message` events.
 */
export interface WhisperClient extends TargetClient {
  whisper(data: Record<string, unknown>): void;
}

/** Replay server / anycable-go: `@anycable/core` `channel.whisper` on a public `$pubsub` stream. */
function anycableWhisperClient(opts: ClientOptions): WhisperClient {
  const events = new Emitter<ClientEvents>();
  const cable = createCable(cableUrl(opts.url), {
    protocol: 'actioncable-v1-ext-json',
    websocketImplementation: WebSocket,
    ...(opts.localAddress ? { websocketOptions: { localAddress: opts.localAddress } } : {}),
    logLevel: 'error',
  });
  let channel: Channel | undefined;
  let attempt = 0;
  cable.on('connect', (ev) => events.emit('connected', { resumed: ev.restored === true, attempt: attempt++ }));
  cable.on('disconnect', () => events.emit('disconnected', { reason: 'server_closed' }));
  cable.on('close', () => events.emit('disconnected', { reason: 'closed' }));
  return {
    index: opts.index,
    async connect() {
      if (!channel) {
        channel = cable.streamFrom(opts.stream);
        channel.on('message', (msg) => events.emit('message', { data: typeof msg === 'string' ? msg : JSON.stringify(msg), at: Date.now() }));
      }
      await channel.ensureSubscribed();
    },
    whisper(data) {
      void channel?.whisper(data);
    },
    drop() {
      const ws = (cable.transport as { ws?: WebSocket } | undefined)?.ws;
      if (!ws || ws.readyState !== WebSocket.OPEN) return false;
      ws.terminate();
      return true;
    },
    async reconnect() {
      await cable.connect();
    },
    close() {
      cable.disconnect();
    },
    on: (e, fn) => events.on(e, fn),
  };
}

/**
 * Socket.IO: join the room with the reference server's `subscribe` (ack), whisper with
 * `socket.emit("whisper", room, payload)`; the server re-emits `whisper` to the room without the
 * sender (the benchmark's convention).
 */
function socketIoWhisperClient(opts: ClientOptions): WhisperClient {
  const events = new Emitter<ClientEvents>();
  let socket: Socket | undefined;
  let attempt = 0;
  return {
    index: opts.index,
    connect() {
      socket = io(opts.url, { transports: ['websocket'], forceNew: true, reconnection: false, timeout: 20_000, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) } as Parameters<typeof io>[1]);
      const s = socket;
      s.on('whisper', (payload: unknown) => events.emit('message', { data: typeof payload === 'string' ? payload : JSON.stringify(payload), at: Date.now() }));
      s.on('disconnect', (reason) => events.emit('disconnected', { reason: reason === 'io client disconnect' ? 'closed' : 'server_closed', detail: reason }));
      return new Promise<void>((resolve, reject) => {
        s.once('connect_error', reject);
        s.once('connect', () => {
          s.timeout(10_000).emit('subscribe', opts.stream, (err: Error | null, reply: { ok?: boolean } | undefined) => {
            if (err || !reply?.ok) return reject(err ?? new Error('subscribe rejected'));
            events.emit('connected', { resumed: false, attempt: attempt++ });
            resolve();
          });
        });
      });
    },
    whisper(data) {
      socket?.emit('whisper', opts.stream, data);
    },
    drop() {
      if (!socket?.connected) return false;
      socket.disconnect();
      return true;
    },
    reconnect() {
      socket?.close();
      return this.connect();
    },
    close() {
      socket?.close();
    },
    on: (e, fn) => events.on(e, fn),
  };
}

/**
 * Rebound's raw ws server: subscribe to the topic, whisper with
 * `{"type":"whisper","stream","data":"<string>"}`; others receive `{"type":"whisper","stream","data"}`.
 */
function wsWhisperClient(opts: ClientOptions): WhisperClient {
  const events = new Emitter<ClientEvents>();
  let ws: WebSocket | undefined;
  let attempt = 0;
  let closing = false;
  return {
    index: opts.index,
    connect() {
      const sock = new WebSocket(`${opts.url.replace(/^http/, 'ws')}/ws`, { perMessageDeflate: false, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) });
      ws = sock;
      return new Promise<void>((resolve, reject) => {
        let subscribed = false;
        sock.on('open', () => sock.send(JSON.stringify({ type: 'subscribe', stream: opts.stream })));
        sock.on('message', (raw) => {
          let f: { type?: string; data?: unknown };
          try {
            f = JSON.parse(raw.toString()) as typeof f;
          } catch {
            return;
          }
          if (f.type === 'subscribed' && !subscribed) {
            subscribed = true;
            events.emit('connected', { resumed: false, attempt: attempt++ });
            resolve();
          } else if (f.type === 'whisper' && typeof f.data === 'string') events.emit('message', { data: f.data, at: Date.now() });
        });
        sock.on('error', (err) => (subscribed ? events.emit('error', err) : reject(err)));
        sock.on('close', () => {
          if (!subscribed) return reject(new Error('closed before subscribing'));
          events.emit('disconnected', { reason: closing ? 'closed' : 'server_closed' });
        });
      });
    },
    whisper(data) {
      if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'whisper', stream: opts.stream, data: JSON.stringify(data) }));
    },
    drop() {
      if (ws?.readyState !== WebSocket.OPEN) return false;
      ws.terminate();
      return true;
    },
    reconnect() {
      ws?.terminate();
      return this.connect();
    },
    close() {
      closing = true;
      ws?.terminate();
    },
    on: (e, fn) => events.on(e, fn),
  };
}

const WHISPER: Record<string, (opts: ClientOptions) => WhisperClient> = {
  replay: anycableWhisperClient,
  anycable: anycableWhisperClient,
  socketio: socketIoWhisperClient,
  'socketio-csr': socketIoWhisperClient,
  ws: wsWhisperClient,
  // uWS speaks the ws server's wire.
  uws: wsWhisperClient,
};

export const WHISPER_TARGETS = Object.keys(WHISPER);

/** The whisper client for a target, or undefined when its protocol has no client-to-client messages. */
export function whisperClientFor(target: string): ((opts: ClientOptions) => WhisperClient) | undefined {
  return WHISPER[target];
}
