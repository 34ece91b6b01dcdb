import { Emitter } from '../../lib/emitter.ts';
import { sourceAddress } from '../measure/addresses.ts';
import { ClientTimelines, type LossReport } from '../measure/client-timelines.ts';
import { ConnectionBook } from '../measure/connections.ts';
import { LatencyRecorder } from '../measure/latency.ts';
import { DeliveryLedger } from '../measure/ledger.ts';
import { resumeProtocolOf } from '../measure/loss-causes.ts';
import { readPayload } from '../targets/payload.ts';
import { checkReconnectOptions, ManualReconnects, type ManualReconnectPolicy, type ReconnectLoopHooks } from '../targets/reconnect.ts';
import { reconnectRng } from '../targets/seeded-jitter.ts';
import type { DisconnectReason, TargetClient } from '../targets/types.ts';
import { realClock } from './clock.ts';
import type { EngineEvents } from './events.ts';
import type { Clock, Phase, SessionOptions } from './types.ts';

/**
 * How a disconnect is counted (results' disconnectReasons). Our own closes come only while the
 * session stops, and are not counted: a 'closed' before that is the server telling the library
 * not to reconnect (a disconnect frame with reconnect: false).
 */
export const disconnectKey = (reason: DisconnectReason): string => (reason === 'closed' ? 'closed_no_reconnect' : reason);

/**
 * What every runner shares while it runs: N clients of one target, each wired once into the
 * connection book, the delivery ledger, the latency recorder and its own timeline (why each lost
 * delivery was lost, engine/measure/loss-causes.ts). Runners add what is theirs through `hooks`;
 * phases (phases/*.ts, chaos/execute) read and drive it. Nothing here prints.
 */
export class RunSession {
  readonly target: SessionOptions['target'];
  readonly runId: string;
  readonly stream: string;
  readonly seed: number;
  readonly clock: Clock;
  /** Empty until openClients(). */
  readonly clients: TargetClient[] = [];
  readonly book: ConnectionBook;
  readonly ledger: DeliveryLedger;
  readonly latency = new LatencyRecorder();
  readonly timelines: ClientTimelines;
  readonly events: Emitter<EngineEvents>;
  /** Noticed disconnects by reason (our own closes excluded). */
  readonly disconnectReasons: Record<string, number> = {};
  /** Reconnects (a `connected` after the first) and those where the server restored the session. */
  readonly counters = { reconnects: 0, resumes: 0, historyRejected: 0, reconnectFailures: 0 };
  /** Arrivals that were not this run's payloads. */
  foreign = 0;
  /**
   * 1 while client i is connected (written only here). Our own close leaves it as the run saw it:
   * the restart runners read who never came back after closing (ClientFleet's tracks read it).
   */
  readonly up: Uint8Array;
  private upN = 0;
  private readonly manual: ManualReconnects;
  private isStopping = false;
  private isAborted = false;
  private readonly abortListeners = new Set<() => void>();
  /**
   * Each pending nap's own controller, fired by abort()/close() so every timer is cleared at once.
   * One controller per nap, not one signal shared by all: every client's chaos step and reconnect
   * loop naps concurrently, and N listeners on one signal is N-fold dispatch work and Node's
   * MaxListenersExceededWarning from the 11th client on.
   */
  private readonly naps = new Set<AbortController>();
  private napsCut = false;
  private readonly unlisten: (() => void) | undefined;

  constructor(private readonly o: SessionOptions) {
    // Every runner's options were checked against the target already; a session is the last place before a client exists.
    const strategy = o.clientOptions?.reconnectStrategy;
    if (strategy !== undefined) checkReconnectOptions(o.target, { reconnectStrategy: strategy });
    this.target = o.target;
    this.runId = o.runId;
    this.stream = o.stream;
    this.seed = o.seed;
    this.clock = o.clock ?? realClock;
    this.events = o.events ?? new Emitter<EngineEvents>();
    this.book = new ConnectionBook(o.clients);
    this.ledger = new DeliveryLedger(o.clients, o.messages);
    this.timelines = new ClientTimelines(o.clients, o.messages, resumeProtocolOf(o.target));
    this.up = new Uint8Array(o.clients);
    this.manual = new ManualReconnects(o.clients);
    if (o.signal) {
      const fn = () => this.abort();
      o.signal.addEventListener('abort', fn, { once: true });
      this.unlisten = () => o.signal!.removeEventListener('abort', fn);
      if (o.signal.aborted) this.abort();
    }
  }

  /**
   * Create and wire every client (once; the connect phase calls it). Separate from the
   * constructor so a runner can first open what client URLs depend on (a proxy fleet).
   */
  openClients(): void {
    if (this.clients.length > 0) return;
    for (let i = 0; i < this.o.clients; i++) this.clients.push(this.wire(i));
  }

  /** Clients connected right now (before our own close). */
  get upCount(): number {
    return this.upN;
  }

  get aborted(): boolean {
    return this.isAborted;
  }

  /** The session is closing its clients: disconnects from here on are ours. */
  get stopping(): boolean {
    return this.isStopping;
  }

  /** Run one phase over this session: its `validate()` first, then `run()`. */
  async run<T>(phase: Phase<T>): Promise<T> {
    phase.validate?.(this);
    return phase.run(this);
  }

  /** A sleep on the session's clock that an abort cuts short. */
  nap(ms: number): Promise<void> {
    if (this.isAborted || this.napsCut) return Promise.resolve();
    const c = new AbortController();
    this.naps.add(c);
    return this.clock.sleep(ms, c.signal).finally(() => this.naps.delete(c));
  }

  private cutNaps(): void {
    this.napsCut = true;
    for (const c of this.naps) c.abort();
    this.naps.clear();
  }

  /** Runs `fn` once when the session is aborted (at once if it already is); returns its disposer. */
  onAbort(fn: () => void): () => void {
    if (this.isAborted) {
      fn();
      return () => {};
    }
    this.abortListeners.add(fn);
    return () => this.abortListeners.delete(fn);
  }

  /** Stop early (the caller's signal, or a phase that cannot go on): every nap returns, listeners run once. */
  abort(): void {
    if (this.isAborted) return;
    this.isAborted = true;
    this.cutNaps();
    for (const fn of this.abortListeners) fn();
    this.abortListeners.clear();
  }

  /** The target accepted `seq` (its 201): expected at every client from now; `at` is the publisher's window for loss causes. */
  accept(seq: number, at?: { sentAt: number; answeredAt: number }): void {
    this.ledger.accept(seq);
    if (at) this.timelines.accepted(seq, at.sentAt, at.answeredAt);
  }

  /**
   * Bring manual client `i` back under `policy` (engine/targets/reconnect.ts: afterOffline,
   * strategyBackoff), one loop per client at a time, on the session's clock; it ends when the
   * session stops or aborts, or when `hooks.done()` says so. True once an attempt subscribed.
   */
  reconnect(i: number, policy: ManualReconnectPolicy, hooks: Partial<ReconnectLoopHooks> = {}): Promise<boolean> {
    return this.manual.run(i, this.clients[i]!, policy, {
      done: () => this.isStopping || this.isAborted || (hooks.done?.() ?? false),
      sleep: (ms) => this.nap(ms),
      ...(hooks.onAttempt ? { onAttempt: hooks.onAttempt } : {}),
      onFailure: (err, k) => {
        this.counters.reconnectFailures++;
        hooks.onFailure?.(err, k);
      },
    });
  }

  /** Every lost delivery of the ledger by cause, resume outcomes, live/replayed and the late split; `of`: these clients only. */
  lossReport(lostToEpoch?: (client: number, seq: number) => boolean, of?: readonly number[]): LossReport {
    return this.timelines.report(this.ledger, this.ledger.totals(of).lostDeliveries, lostToEpoch, of);
  }

  close(): void {
    this.isStopping = true;
    // Pending naps (a reconnect loop's pause) end now; their loops see `stopping` and return.
    this.cutNaps();
    for (const c of this.clients) c.close();
    this.unlisten?.();
  }

  /** Client i, routed into the session's books; the runner's hooks run after. */
  private wire(i: number): TargetClient {
    const o = this.o;
    const opts = { ...o.clientOptions, index: i, url: o.urlOf(i), stream: o.stream, localAddress: sourceAddress(i), reconnectRng: reconnectRng(o.seed, i) };
    const c = (o.createClient ?? ((x) => o.target.createClient(x)))(opts);
    const h = o.hooks ?? {};
    if (o.onMessage) c.on('message', (m) => o.onMessage!(i, m));
    else c.on('message', (m) => {
      const p = readPayload(m, this.runId);
      if (!p) {
        this.foreign++;
        return h.foreign?.(i, m);
      }
      const latencyMs = m.at - p.sentAt;
      const fresh = this.ledger.record(i, p.seq, latencyMs) === 'new';
      if (fresh) {
        this.latency.recordMs(latencyMs);
        this.timelines.arrival(i, p.seq);
      }
      h.delivery?.({ client: i, seq: p.seq, sentAt: p.sentAt, latencyMs, fresh, message: m });
    });
    c.on('connected', ({ resumed, attempt }) => {
      const at = this.clock.now();
      if (!this.up[i]) this.upN++;
      this.up[i] = 1;
      this.book.connected(i);
      this.timelines.connected(i, at, resumed);
      if (attempt > 0) {
        this.counters.reconnects++;
        if (resumed) this.counters.resumes++;
      }
      h.connected?.(i, { resumed, attempt, at });
    });
    c.on('disconnected', ({ reason, detail }) => {
      // Our own close at the end of the run is not a disruption being noticed, nor a client gone.
      if (this.isStopping) return;
      const wasUp = this.up[i] === 1;
      if (wasUp) this.upN--;
      this.up[i] = 0;
      const at = this.clock.now();
      // Ours come only while stopping (above): a 'closed' now is the server sending the client
      // away for good, an offline span that never ends.
      this.timelines.disconnected(i, at, reason, detail);
      const key = disconnectKey(reason);
      this.disconnectReasons[key] = (this.disconnectReasons[key] ?? 0) + 1;
      h.disconnected?.(i, detail === undefined ? { reason, at, wasUp } : { reason, detail, at, wasUp });
    });
    c.on('history', (info) => {
      this.timelines.history(i, info.ok, info.reason);
      if (!info.ok) this.counters.historyRejected++;
      h.history?.(i, info);
    });
    c.on('error', () => {});
    return c;
  }
}
