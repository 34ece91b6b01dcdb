import type { ArrivedMessage, ClientEvents, ClientOptions, TargetClient } from './types.ts';
import { LeanSocket } from './lean-socket.ts';

/** How far a lean client got: what the idle runner reports as connected / welcomed / subscribed. */
export const LeanStage = {
  Idle: 0,
  /** TCP and the WebSocket upgrade succeeded. */
  Connected: 1,
  /** The protocol greeted us (AnyCable welcome, Socket.IO CONNECT ack; raw ws: the open itself). */
  Welcomed: 2,
  Subscribed: 3,
} as const;
export type LeanStage = (typeof LeanStage)[keyof typeof LeanStage];

/** One protocol spoken over a LeanSocket: its URL, what to send when, what counts as subscribed. */
export interface LeanProtocol {
  url(base: string): string;
  subprotocol?: string;
  /** Called on open: return frames to send (none when absent: the server speaks first). */
  onOpen?(stream: string): string[];
  /**
   * Interpret one server message. `send` answers (pongs, subscribe after welcome); return the
   * stage reached, a broadcast's data, or nothing. `notice`: what the server said it is about to
   * do (a protocol-level goodbye such as AnyCable's `disconnect server_restart`), kept as the
   * `disconnected` event's detail so a runner can report what clients were told.
   */
  onMessage(payload: Buffer, stream: string, send: (text: string) => void): { stage?: LeanStage; data?: string; value?: unknown; error?: string; notice?: string } | undefined;
}

/**
 * An arrival whose payload came parsed off the wire (the lean AnyCable wire, @anycable/core):
 * `data` is serialized only when read.
 */
export class ParsedArrival implements ArrivedMessage {
  private text: string | undefined;
  constructor(readonly value: unknown, readonly at: number) {}
  get data(): string {
    return (this.text ??= JSON.stringify(this.value));
  }
}

/**
 * A LeanProtocol function threw (a user's target file: docs/targets.md): the connection fails with
 * this, and the client emits it as `error` so a target file's guard (user-module.ts) books it as
 * a fault of the file (TARGET_MODULE_FAULT) instead of a failure of the server.
 */
const FAULT_BRAND = Symbol.for('rebound.LeanProtocolFault');

export class LeanProtocolFault extends Error {
  /** A brand, not `instanceof`: a target file outside the tree may load its own copy of this module (tsx compiles a file without a package.json as CommonJS), and its faults must still be seen. */
  readonly [FAULT_BRAND] = true;
  constructor(readonly hook: string, err: unknown) {
    super(`lean protocol ${hook} threw: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300));
  }
  static is(e: unknown): e is LeanProtocolFault {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[FAULT_BRAND] === true && typeof (e as { hook?: unknown }).hook === 'string';
  }
}

type Listeners = { [E in keyof ClientEvents]?: ClientEvents[E][] };

/**
 * A TargetClient over a LeanSocket. Listener arrays are created only for events someone listens
 * to, so an idle client that only cares about `disconnected` carries one small array.
 */
export class LeanClient implements TargetClient {
  readonly index: number;
  stage: LeanStage = LeanStage.Idle;
  private sock: LeanSocket | undefined;
  private listeners: Listeners | undefined;
  private attempt = 0;
  private closedByUs = false;
  private dropping = false;
  private notice: string | undefined;

  constructor(private readonly opts: ClientOptions, private readonly proto: LeanProtocol) {
    this.index = opts.index;
  }

  on<E extends keyof ClientEvents>(event: E, fn: ClientEvents[E]): () => void {
    const l = (this.listeners ??= {});
    const arr = (l[event] ??= []) as ClientEvents[E][];
    arr.push(fn);
    return () => {
      const i = arr.indexOf(fn);
      if (i >= 0) arr.splice(i, 1);
    };
  }

  private emit<E extends keyof ClientEvents>(event: E, ...args: Parameters<ClientEvents[E]>): void {
    const arr = this.listeners?.[event];
    if (arr) for (const fn of arr) (fn as (...a: Parameters<ClientEvents[E]>) => void)(...args);
  }

  connect(): Promise<void> {
    if (this.closedByUs) return Promise.reject(new Error('client closed'));
    this.sock?.destroy();
    this.stage = LeanStage.Idle;
    this.dropping = false;
    this.notice = undefined;
    let url: string;
    try {
      url = this.proto.url(this.opts.url);
    } catch (err) {
      const e = new LeanProtocolFault('url()', err);
      this.emit('error', e);
      return Promise.reject(e);
    }
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const stream = this.opts.stream;
      // A protocol that throws (a user's target file: docs/targets.md) fails this connection, never the process.
      const broken = (hook: string, err: unknown) => {
        const e = new LeanProtocolFault(hook, err);
        this.emit('error', e);
        if (!settled) {
          settled = true;
          reject(e);
        }
        sock.destroy(); // after: its close would settle first with a bare "closed before subscribing"
      };
      const sock: LeanSocket = new LeanSocket({
        open: () => {
          this.stage = LeanStage.Connected;
          try {
            for (const f of this.proto.onOpen?.(stream) ?? []) sock.sendText(f);
          } catch (err) {
            broken('onOpen()', err);
          }
        },
        message: (payload) => {
          let r: ReturnType<LeanProtocol['onMessage']>;
          try {
            r = this.proto.onMessage(payload, stream, (t) => sock.sendText(t));
          } catch (err) {
            return broken('onMessage()', err);
          }
          if (!r) return;
          if (r.notice !== undefined) this.notice = r.notice;
          if (r.error && !settled) {
            settled = true;
            sock.destroy();
            return reject(new Error(r.error));
          }
          if (r.stage !== undefined && r.stage > this.stage) this.stage = r.stage;
          if (r.stage === LeanStage.Subscribed && !settled) {
            settled = true;
            this.emit('connected', { resumed: false, attempt: this.attempt++ });
            resolve();
          }
          if (r.data !== undefined) this.emit('message', { data: r.data, at: Date.now() });
          else if (r.value !== undefined) this.emit('message', new ParsedArrival(r.value, Date.now()));
        },
        closed: (err, code) => {
          if (this.sock !== sock) return;
          if (!settled) {
            settled = true;
            reject(err ?? new Error(`closed before subscribing (${code ?? '?'})`));
            return;
          }
          const reason = this.closedByUs ? 'closed' : this.dropping ? 'dropped' : err ? 'transport_error' : 'server_closed';
          const detail = this.notice ?? (err ? err.message : code ? String(code) : undefined);
          this.emit('disconnected', { reason, ...(detail !== undefined ? { detail } : {}) });
        },
      });
      this.sock = sock;
      sock.open({ url, localAddress: this.opts.localAddress, protocol: this.proto.subprotocol });
    });
  }

  drop(): boolean {
    if (!this.sock?.isOpen) return false;
    this.dropping = true;
    this.sock.destroy();
    return true;
  }

  reconnect(): Promise<void> {
    return this.connect();
  }

  close(): void {
    this.closedByUs = true;
    this.sock?.close();
  }
}
