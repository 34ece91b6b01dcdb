import WebSocket from 'ws';
import { childRng } from '../../lib/rng.ts';
import { sourceAddress } from '../core/addresses.ts';
import { rampConnect } from '../core/connections.ts';
import { LatencyRecorder } from '../core/latency.ts';
import { DeliveryLedger } from '../core/ledger.ts';
import { readPayload } from '../core/publisher.ts';
import type { ClientOptions, TargetClient, TargetDefinition } from '../targets/types.ts';
import { ManualReconnects, strategyBackoff, strategyDelayMs } from '../targets/reconnect.ts';
import { handshakeFailureKind } from './handshake.ts';
import { reconnectRng } from '../targets/seeded-jitter.ts';

/** What the fleet knows about one client, on the runner's clock (ms since epoch; 0 = never). */
export interface ClientTrack {
  connected: boolean;
  /** Connected when the restart began (the clients a restart can drop). */
  connectedAtRestart: boolean;
  /** Disconnects noticed after the restart began. */
  drops: number;
  firstDropAt: number;
  /** When the client was last connected and subscribed again after a drop. */
  backAt: number;
  /** Connect attempts after the restart began (successful ones included). */
  attempts: number;
  attemptStartedAt: number;
}

export interface FleetOptions {
  target: TargetDefinition;
  /** One base URL per node; client i uses urls[i % urls.length]. */
  urls: readonly string[];
  stream: string;
  runId: string;
  clients: number;
  messages: number;
  seed: number;
  reconnectStrategy: 'default' | 'tuned';
  /** Base of the tuned backoff, ms; default 500. */
  reconnectBaseMs?: number;
}

/** @deprecated kept one merge cycle for shards/runner/benchmark-requests.test.ts: use strategyDelayMs (runners/targets/reconnect.ts). */
export const backoffMs = strategyDelayMs;

/**
 * N clients of one target, routed into the one ledger, with what a restart needs on top: per
 * client drop and back times, connect attempts and their failures by kind, connect latency during
 * the herd. Manual targets (ws, default Socket.IO) are reconnected here with a seeded backoff;
 * library targets reconnect themselves and their attempts are observed, not driven.
 */
export class ClientFleet {
  readonly ledger: DeliveryLedger;
  readonly deliveryLatency = new LatencyRecorder();
  readonly connectLatency = new LatencyRecorder();
  readonly tracks: ClientTrack[];
  readonly clients: TargetClient[] = [];
  readonly handshakeFailures: Record<string, number> = {};
  readonly disconnectReasons: Record<string, number> = {};
  /** The library's own words for each disconnect (e.g. socket.io's 'io server disconnect', after which it does not reconnect). */
  readonly disconnectDetails: Record<string, number> = {};
  readonly connectFailureCauses: Record<string, number> = {};
  /** Reconnect times (runner clock) in order, for the herd curve. */
  readonly reconnectTimes: number[] = [];
  foreign = 0;
  resumes = 0;
  /** Replay protocols: history requests the server could not serve (e.g. a stream epoch from before the restart). */
  historyNotFound = 0;
  dropsBeforeRestart = 0;
  herdStart = 0;
  private stopping = false;
  private reconnectUntil = Infinity;
  private readonly manual: ManualReconnects;

  constructor(private readonly o: FleetOptions) {
    this.ledger = new DeliveryLedger(o.clients, o.messages);
    this.tracks = Array.from({ length: o.clients }, () => ({ connected: false, connectedAtRestart: false, drops: 0, firstDropAt: 0, backAt: 0, attempts: 0, attemptStartedAt: 0 }));
    this.manual = new ManualReconnects(o.clients);
    for (let i = 0; i < o.clients; i++) this.clients.push(this.wire(i));
  }

  nodeOf(i: number): number {
    return i % this.o.urls.length;
  }

  connectedCount(): number {
    let n = 0;
    for (const t of this.tracks) n += t.connected ? 1 : 0;
    return n;
  }

  /** The restart begins now: from here on drops, attempts and connect latencies belong to the herd. */
  markRestart(now = Date.now(), reconnectUntil = Infinity): void {
    this.herdStart = now;
    this.reconnectUntil = reconnectUntil;
    for (const t of this.tracks) t.connectedAtRestart = t.connected;
  }

  /** Every client that was connected at the restart is connected again. */
  allBack(): boolean {
    for (const t of this.tracks) if (t.connectedAtRestart && !t.connected) return false;
    return true;
  }

  /** Connect every client at `ramp` per second; resolves with the number that failed. */
  async connectAll(ramp: number, timeoutMs = 20_000): Promise<number> {
    const { connectFailures, connectFailureCauses } = (await rampConnect({ count: this.o.clients, perSec: ramp, connect: (i) => this.clients[i]!.connect(), timeoutMs })).summary();
    for (const [cause, n] of Object.entries(connectFailureCauses)) this.connectFailureCauses[cause] = (this.connectFailureCauses[cause] ?? 0) + n;
    return connectFailures;
  }

  close(): void {
    this.stopping = true;
    for (const c of this.clients) c.close();
  }

  private attemptStarted(i: number): void {
    const t = this.tracks[i]!;
    t.attemptStartedAt = Date.now();
    if (this.herdStart) t.attempts++;
  }

  private attemptFailed(i: number, err: unknown): void {
    this.tracks[i]!.attemptStartedAt = 0;
    if (!this.herdStart || this.stopping) return;
    const kind = handshakeFailureKind(err);
    this.handshakeFailures[kind] = (this.handshakeFailures[kind] ?? 0) + 1;
  }

  /** A socket closed: if its attempt had not connected nor failed yet, it failed now. */
  private attemptClosed(i: number): void {
    if (this.tracks[i]!.attemptStartedAt) this.attemptFailed(i, new Error('closed before subscribed'));
  }

  private wire(i: number): TargetClient {
    const o = this.o;
    const opts: ClientOptions & { cableOptions?: Record<string, unknown> } = {
      index: i,
      url: o.urls[this.nodeOf(i)]!,
      stream: o.stream,
      localAddress: sourceAddress(i),
      reconnectStrategy: o.reconnectStrategy,
      ...(o.reconnectBaseMs !== undefined ? { reconnectBaseMs: o.reconnectBaseMs } : {}),
      reconnectRng: reconnectRng(o.seed, i),
    };
    // AnyCable clients open one WebSocket per attempt: a counting subclass sees each attempt and
    // its failure without changing the library's behaviour.
    if (o.target.capabilities.library === '@anycable/core') opts.cableOptions = { websocketImplementation: countingWebSocket(() => this.attemptStarted(i), (e) => this.attemptFailed(i, e), () => this.attemptClosed(i)) };
    const c = o.target.createClient(opts);
    c.on('message', (m) => {
      const p = readPayload(m, o.runId);
      if (!p) {
        this.foreign++;
        return;
      }
      const lat = m.at - p.sentAt;
      if (this.ledger.record(i, p.seq, lat) === 'new') this.deliveryLatency.recordMs(lat);
    });
    c.on('connected', ({ resumed }) => this.onConnected(i, resumed));
    c.on('disconnected', ({ reason, detail }) => {
      if (this.stopping) return;
      // We close only when stopping: a 'closed' now is the server telling the library not to
      // reconnect (a disconnect frame with reconnect: false), and that client stays away.
      const key = reason === 'closed' ? `closed_no_reconnect${detail ? `:${detail}` : ''}` : reason;
      const t = this.tracks[i]!;
      if (!t.connected && reason !== 'closed') return; // a library reporting each failed attempt again
      this.disconnectReasons[key] = (this.disconnectReasons[key] ?? 0) + 1;
      if (detail) this.disconnectDetails[detail] = (this.disconnectDetails[detail] ?? 0) + 1;
      if (!t.connected) return;
      t.connected = false;
      if (this.herdStart) {
        t.drops++;
        t.firstDropAt ||= Date.now();
      } else this.dropsBeforeRestart++;
      if (o.target.reconnect === 'manual') void this.reconnectManual(i);
    });
    c.on('history', ({ ok }) => void (ok || this.historyNotFound++));
    c.on('error', () => {});
    if (o.target.capabilities.library === 'socket.io-client' && o.target.reconnect === 'library') observeSocketIoManager(c, () => this.attemptStarted(i), (e) => this.attemptFailed(i, e));
    return c;
  }

  private onConnected(i: number, resumed: boolean): void {
    const now = Date.now();
    const t = this.tracks[i]!;
    t.connected = true;
    if (t.attemptStartedAt && this.herdStart) this.connectLatency.recordMs(now - t.attemptStartedAt);
    t.attemptStartedAt = 0;
    if (this.herdStart && t.drops > 0) {
      t.backAt = now;
      this.reconnectTimes.push(now);
      if (resumed) this.resumes++;
    }
  }

  /**
   * Runner-driven reconnect for manual targets: the named strategy's backoff (runners/targets/
   * reconnect.ts) seeded per client and outage, bounded in attempts and by the recovery wait.
   */
  private reconnectManual(i: number): Promise<boolean> {
    return this.manual.run(i, this.clients[i]!, strategyBackoff(this.o.reconnectStrategy, childRng(this.o.seed, i), this.o.reconnectBaseMs), {
      done: () => this.stopping || this.tracks[i]!.connected || Date.now() > this.reconnectUntil,
      onAttempt: () => this.attemptStarted(i),
      onFailure: (err) => this.attemptFailed(i, err),
    });
  }
}

/** A `ws` WebSocket that reports each construction (one attempt), its error and its close. */
function countingWebSocket(onStart: () => void, onError: (e: Error) => void, onClose: () => void): typeof WebSocket {
  return class CountingWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[], options?: WebSocket.ClientOptions) {
      super(address, protocols, options);
      onStart();
      this.on('error', (e) => onError(e));
      this.on('close', () => onClose());
    }
  } as typeof WebSocket;
}

interface ManagerLike {
  on(ev: string, fn: (arg: unknown) => void): void;
}

/**
 * socket.io-client reconnects inside its Manager, which the adapter does not expose: read it off
 * the adapter's socket once connected. If the adapter's shape changes, attempts are simply not
 * observed (the report then shows 0 attempts, never a wrong count of failures).
 */
function observeSocketIoManager(c: TargetClient, onStart: () => void, onError: (e: unknown) => void): void {
  let hooked: unknown;
  c.on('connected', () => {
    const io = (c as unknown as { socket?: { io?: ManagerLike } }).socket?.io;
    if (!io || hooked === io || typeof io.on !== 'function') return;
    hooked = io;
    io.on('reconnect_attempt', () => onStart());
    io.on('reconnect_error', (e) => onError(e));
  });
}
