import WebSocket from 'ws';
import { childRng } from '../../lib/rng.ts';
import type { AnyCableClientOptions } from '../targets/anycable.ts';
import type { ClientOptions, DisconnectReason, TargetClient } from '../targets/types.ts';
import { strategyBackoff } from '../targets/reconnect.ts';
import { targetModuleField } from '../targets/user-module.ts';
import { handshakeFailureKind } from '../measure/handshake.ts';
import { LatencyRecorder, summarize } from '../measure/latency.ts';
import { quantiles as nearestRanks } from '../measure/timeseries.ts';
import { connectPhase } from './phases/connect.ts';
import { cancelled } from './present.ts';
import { disconnectKey, RunSession } from './session.ts';
import type { SessionOptions } from './types.ts';

/** What the fleet knows about one client, on the runner's clock (ms since epoch; 0 = never). */
export interface ClientTrack {
  /** Connected now: the session's `up`, read through, not a second record kept in step with it. */
  readonly connected: boolean;
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

/** The benchmark's percentile: element floor((len − 1)·p/100) of the sorted values (timeseries' nearest rank), 0 with none. */
export function quantiles(values: readonly number[]) {
  const q = nearestRanks(values);
  return { count: values.length, p50: q[50] ?? 0, p95: q[95] ?? 0, p99: q[99] ?? 0, max: q[100] ?? 0 };
}

export type Quantiles = ReturnType<typeof quantiles>;

/** Clients the restart dropped: connected when it began and disconnected afterwards. */
export const droppedTracks = (tracks: readonly ClientTrack[]) => tracks.filter((t) => t.connectedAtRestart && t.drops > 0);

/** The session's options, with one base URL per node for its urlOf, and the reconnect strategy. */
export type FleetOptions = Pick<SessionOptions, 'target' | 'stream' | 'runId' | 'clients' | 'messages' | 'seed' | 'signal'> & {
  /** One base URL per node; client i uses urls[i % urls.length]. */
  urls: readonly string[];
  reconnectStrategy: 'default' | 'tuned';
  /** Base of the tuned backoff, ms; default 500. */
  reconnectBaseMs?: number;
};

/**
 * A run session (engine/session/session.ts) with what a restart needs on top: per client drop
 * and back times, connect attempts and their failures by kind, connect latency during the herd.
 * Manual targets (ws, default Socket.IO) are reconnected through the session's driver with a
 * seeded backoff; library targets reconnect themselves and their attempts are observed, not
 * driven. The restart runners (avalanche, deploy-impact) share it.
 */
export class ClientFleet {
  readonly session: RunSession;
  readonly connectLatency = new LatencyRecorder();
  readonly tracks: ClientTrack[];
  readonly handshakeFailures: Record<string, number> = {};
  readonly disconnectReasons: Record<string, number> = {};
  /** The library's own words for each disconnect (e.g. socket.io's 'io server disconnect', after which it does not reconnect). */
  readonly disconnectDetails: Record<string, number> = {};
  resumes = 0;
  dropsBeforeRestart = 0;
  /** The connect phase's outcome: restartFields reports it, not connects that landed later. */
  private connects = { connectFailures: 0, connectFailureCauses: {} as Record<string, number> };
  herdStart = 0;
  private reconnectUntil = Infinity;

  constructor(private readonly o: FleetOptions) {
    const { urls, reconnectStrategy, reconnectBaseMs, ...shared } = o;
    this.session = new RunSession({
      ...shared,
      urlOf: (i) => urls[this.nodeOf(i)]!,
      clientOptions: { reconnectStrategy, ...(reconnectBaseMs !== undefined ? { reconnectBaseMs } : {}) },
      createClient: (opts) => this.create(opts),
      hooks: {
        connected: (i, { resumed, at }) => this.onConnected(i, resumed, at),
        disconnected: (i, { reason, detail, wasUp }) => this.onDisconnected(i, reason, detail, wasUp),
      },
    });
    const { up } = this.session;
    this.tracks = Array.from({ length: o.clients }, (_, i) => ({ get connected() { return up[i] === 1; }, connectedAtRestart: false, drops: 0, firstDropAt: 0, backAt: 0, attempts: 0, attemptStartedAt: 0 }));
    this.session.openClients();
  }

  nodeOf(i: number): number {
    return i % this.o.urls.length;
  }

  connectedCount(): number {
    return this.session.upCount;
  }

  /** The restart begins now: from here on drops, attempts and connect latencies belong to the herd. */
  markRestart(now = Date.now(), reconnectUntil = Infinity): void {
    this.herdStart = now;
    this.reconnectUntil = reconnectUntil;
    for (const t of this.tracks) t.connectedAtRestart = t.connected;
  }

  /** Every client that was connected at the restart is connected again. */
  allBack(): boolean {
    return this.tracks.every((t) => t.connected || !t.connectedAtRestart);
  }

  /** Connect every client at `ramp` per second (the session's connect phase); resolves with the number that failed. */
  async connectAll(ramp: number, detail: string): Promise<number> {
    await this.session.run(connectPhase({ perSec: ramp, timeoutMs: 20_000, detail }));
    this.connects = this.session.book.summary();
    return this.connects.connectFailures;
  }

  /** Nap `ms`, then end the run if it was cancelled meanwhile (its `finally` stops everything). */
  async wait(ms: number): Promise<void> {
    await this.session.nap(ms);
    cancelled(this.session);
  }

  /**
   * What every restart run reports alike (RestartRunResult): connects, who the restart dropped
   * and who came back, delivery order and latency from the session, and the loss-cause fields.
   * Read after the run's last `ledger.accept`.
   */
  restartFields() {
    const s = this.session;
    const dropped = droppedTracks(this.tracks);
    const never = dropped.filter((t) => !t.connected).length;
    const totals = s.ledger.totals();
    const enc = s.latency.encode();
    return {
      clients: this.o.clients,
      connectedClients: this.o.clients - this.connects.connectFailures,
      connectFailures: this.connects.connectFailures,
      connectFailureCauses: this.connects.connectFailureCauses,
      initiallyConnected: this.tracks.filter((t) => t.connectedAtRestart).length,
      droppedConnections: dropped.length,
      reconnected: dropped.length - never,
      neverReconnected: never,
      disconnectReasons: this.disconnectReasons,
      duplicates: totals.duplicates,
      outOfOrder: totals.outOfOrder,
      foreignMessages: s.foreign + totals.foreign,
      ...summarize(enc),
      latencyHistogram: enc,
      ...s.lossReport(),
      // A user's target file: its hooks' faults, so TARGET_MODULE_FAULT fires on avalanche and deploy-impact as on jitter.
      ...targetModuleField(s.clients),
    };
  }

  private create(opts: ClientOptions): TargetClient {
    const i = opts.index;
    const t = this.o.target;
    // AnyCable clients open one WebSocket per attempt: a counting subclass sees each attempt and
    // its failure without changing the library's behaviour.
    const withCounting: AnyCableClientOptions = t.capabilities.library === '@anycable/core' ? { ...opts, cableOptions: { websocketImplementation: countingWebSocket(() => this.attemptStarted(i), (e) => this.attemptFailed(i, e), () => this.attemptClosed(i)) } } : opts;
    const c = t.createClient(withCounting);
    if (t.capabilities.library === 'socket.io-client' && t.reconnect === 'library') observeSocketIoManager(c, () => this.attemptStarted(i), (e) => this.attemptFailed(i, e));
    return c;
  }

  private attemptStarted(i: number): void {
    const t = this.tracks[i]!;
    t.attemptStartedAt = Date.now();
    if (this.herdStart) t.attempts++;
  }

  private attemptFailed(i: number, err: unknown): void {
    this.tracks[i]!.attemptStartedAt = 0;
    if (!this.herdStart || this.session.stopping) return;
    const kind = handshakeFailureKind(err);
    this.handshakeFailures[kind] = (this.handshakeFailures[kind] ?? 0) + 1;
  }

  /** A socket closed: if its attempt had not connected nor failed yet, it failed now. */
  private attemptClosed(i: number): void {
    if (this.tracks[i]!.attemptStartedAt) this.attemptFailed(i, new Error('closed before subscribed'));
  }

  private onDisconnected(i: number, reason: DisconnectReason, detail: string | undefined, wasUp: boolean): void {
    // We close only when stopping: a 'closed' now is the server telling the library not to
    // reconnect (a disconnect frame with reconnect: false), and that client stays away.
    const key = disconnectKey(reason) + (reason === 'closed' && detail ? `:${detail}` : '');
    if (!wasUp && reason !== 'closed') return; // a library reporting each failed attempt again
    this.disconnectReasons[key] = (this.disconnectReasons[key] ?? 0) + 1;
    if (detail) this.disconnectDetails[detail] = (this.disconnectDetails[detail] ?? 0) + 1;
    if (!wasUp) return;
    const t = this.tracks[i]!;
    if (this.herdStart) {
      t.drops++;
      t.firstDropAt ||= Date.now();
    } else this.dropsBeforeRestart++;
    // The named strategy's backoff (engine/targets/reconnect.ts), seeded per client and outage,
    // bounded in attempts and by the recovery wait.
    if (this.o.target.reconnect === 'manual' && reason !== 'closed')
      void this.session.reconnect(i, strategyBackoff(this.o.reconnectStrategy, childRng(this.o.seed, i), this.o.reconnectBaseMs), {
        done: () => this.tracks[i]!.connected || Date.now() > this.reconnectUntil,
        onAttempt: () => this.attemptStarted(i),
        onFailure: (err) => this.attemptFailed(i, err),
      });
  }

  private onConnected(i: number, resumed: boolean, now: number): void {
    const t = this.tracks[i]!;
    if (t.attemptStartedAt && this.herdStart) this.connectLatency.recordMs(now - t.attemptStartedAt);
    t.attemptStartedAt = 0;
    if (this.herdStart && t.drops > 0) {
      t.backAt = now;
      if (resumed) this.resumes++;
    }
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

/**
 * socket.io-client reconnects inside its Manager, which the adapter does not expose: read it off
 * the adapter's socket once connected. If the adapter's shape changes, attempts are simply not
 * observed (the report then shows 0 attempts, never a wrong count of failures).
 */
function observeSocketIoManager(c: TargetClient, onStart: () => void, onError: (e: unknown) => void): void {
  let hooked: unknown;
  c.on('connected', () => {
    const io = (c as unknown as { socket?: { io?: { on(ev: string, fn: (arg: unknown) => void): void } } }).socket?.io;
    if (!io || hooked === io || typeof io.on !== 'function') return;
    hooked = io;
    io.on('reconnect_attempt', () => onStart());
    io.on('reconnect_error', (e) => onError(e));
  });
}
