/**
 * The run engine's contracts (issue 23, part 1), after k6 and autocannon: a RunSession holds what
 * every runner shares (its clients, the connection book, the delivery ledger, the latency
 * recorder, each client's timeline for loss causes, the abort signal, an injected clock) and a
 * run is phases over one session, each a config with `validate()` and `run()`. The engine never
 * prints: it emits events (events.ts) and presentation subscribes (present.ts).
 */
import type { Emitter } from '../../lib/emitter.ts';
import type { ArrivedMessage, ClientOptions, DisconnectReason, TargetClient, TargetDefinition } from '../targets/types.ts';
import type { EngineEvents } from './events.ts';
import type { RunSession } from './session.ts';

/** Time as the engine sees it. Injected so a test can drive phases without real waits (clock.ts). */
export interface Clock {
  now(): number;
  /** Resolves after `ms` (at once for ms <= 0), or when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** One of this run's payloads as decoded at a client (engine/targets/payload.ts). */
interface Delivery {
  client: number;
  seq: number;
  sentAt: number;
  /** m.at - sentAt, ms. */
  latencyMs: number;
  /** First arrival of (client, seq): the ledger counted it as new. */
  fresh: boolean;
  message: ArrivedMessage;
}

/** Runner-specific additions to the session's own client wiring; each is called after the session booked the event. */
export interface SessionHooks {
  delivery?: (d: Delivery) => void;
  /** An arrival that is not one of this run's payloads (already counted in `foreign`). */
  foreign?: (client: number, m: ArrivedMessage) => void;
  connected?: (client: number, info: { resumed: boolean; attempt: number; at: number }) => void;
  /**
   * Not called for disconnects while the session is closing. `wasUp`: the client was connected
   * until now (`up` is already cleared); false e.g. when a library reports a failed attempt again.
   */
  disconnected?: (client: number, info: { reason: DisconnectReason; detail?: string; at: number; wasUp: boolean }) => void;
  history?: (client: number, info: { ok: boolean; reason?: string }) => void;
}

export interface SessionOptions {
  target: TargetDefinition;
  /** Client i's base URL (a proxy's, a node's, or the one target's). */
  urlOf: (i: number) => string;
  clients: number;
  /** Highest seq the ledger books (the planned messages). */
  messages: number;
  runId: string;
  stream: string;
  seed: number;
  signal?: AbortSignal;
  clock?: Clock;
  /** Extra client options (reconnect strategy, base); index, url, stream, source address and the seeded reconnect rng are the session's. */
  clientOptions?: Partial<ClientOptions> & Record<string, unknown>;
  /** Build a client (a lean client, a counting socket); default `target.createClient`. */
  createClient?: (opts: ClientOptions) => TargetClient;
  hooks?: SessionHooks;
  /** Emit into this emitter instead of a new one (a runner that hands its events out before the session exists). */
  events?: Emitter<EngineEvents>;
  /**
   * Messages that are not the publisher's payloads (whispers: client-to-client frames) go here
   * instead of the session's decoder and ledger; the runner books them itself.
   */
  onMessage?: (client: number, m: ArrivedMessage) => void;
}

/**
 * What phases see of a session: RunSession's public surface (session.ts documents each member),
 * read-only and without what only its owner calls (abort, the runner's counters).
 */
export type Session = Readonly<Omit<RunSession, 'clients' | 'abort' | 'disconnectReasons' | 'counters'>> & { readonly clients: readonly TargetClient[] };

/**
 * One step of a run over a session (k6's executor): its configuration is the object itself,
 * `validate()` refuses one that cannot run (a ReboundError with a code) before anything
 * connects, `run()` does the work and returns what it measured.
 */
export interface Phase<T = void> {
  readonly name: import('./events.ts').PhaseName;
  validate?(s: Session): void;
  run(s: Session): Promise<T>;
}
