import type { LeanClient } from './lean-client.ts';
import type { ResumeProtocol } from '../measure/loss-causes.ts';
import type { TargetPublish } from './publish.ts';

/**
 * One client-adapter interface for every protocol. Runners never touch a protocol library
 * directly: they connect, subscribe, listen for messages, drop and close through this.
 */

/** Why a client lost its connection; aggregated in reports. */
export type DisconnectReason =
  | 'dropped' // we force-closed the socket (chaos)
  | 'server_closed' // the server closed it (close frame, restart, too_slow...)
  | 'transport_error' // socket error / reset / timeout noticed by the library
  | 'closed'; // the library closed for good: our own close, or the server's disconnect with reconnect: false (RunSession tells them apart)

export interface ArrivedMessage {
  /** Broadcast `data` exactly as published (a string). */
  readonly data: string;
  /**
   * `data` already parsed, when the client had to parse it anyway (the AnyCable wire carries a
   * JSON payload as JSON): a consumer that wants the value skips a second parse, and `data` is
   * then serialized only if someone reads it. Absent: parse `data` yourself.
   */
  readonly value?: unknown;
  /** Arrival time, ms since epoch (Date.now() at receipt). */
  at: number;
  /** Stream position when the protocol has one (replay server). */
  offset?: number;
  /** The stream epoch the frame carried (replay protocols): a new one means the broker came back empty. */
  epoch?: string;
}

export interface ClientEvents {
  message: (m: ArrivedMessage) => void;
  /** The socket is (again) open and subscribed. `resumed` is true when the server restored state (CSR recovered, AnyCable session restored). */
  connected: (info: { resumed: boolean; attempt: number }) => void;
  disconnected: (info: { reason: DisconnectReason; detail?: string }) => void;
  /** Protocol-level history outcome (replay protocols only); `reason` is the server's for a rejection when it gave one (`epoch_changed`). */
  history: (info: { ok: boolean; reason?: string }) => void;
  error: (err: Error) => void;
}

export interface TargetClient {
  readonly index: number;
  /** Open the connection and subscribe to the stream; resolves once subscribed. */
  connect(): Promise<void>;
  /**
   * Force-close the TCP socket with no close handshake, so the library goes down its normal
   * reconnect path. Returns false when there was no live socket to drop.
   */
  drop(): boolean;
  /** For targets whose reconnect the runner drives: open a fresh connection and resubscribe. */
  reconnect(): Promise<void>;
  /** Clean close; no reconnect afterwards. */
  close(): void;
  on<E extends keyof ClientEvents>(event: E, fn: ClientEvents[E]): () => void;
  /**
   * Send a client-to-client message to the stream's other subscribers ("whisper"); they get it as
   * a `message`. Present exactly on clients whose capabilities say `whispers`.
   */
  whisper?(data: Record<string, unknown>): void;
}

export interface ClientOptions {
  index: number;
  /** Base URL of the service (http://host:port); adapters derive their ws URL. */
  url: string;
  stream: string;
  /** Source address for the TCP connection, to spread over 127.0.0.x. */
  localAddress?: string;
  /** Named reconnect strategy for library-driven targets (e.g. 'default' | 'tuned'). */
  reconnectStrategy?: string;
  /** Base of the tuned backoff, ms (the benchmark's reconnectBaseMs); default TUNED_BACKOFF.baseMs (500). */
  reconnectBaseMs?: number;
  /**
   * Random source for the library's reconnect jitter (runners seed it per client with
   * `reconnectRng(seed, index)`, so one seed gives one reconnect schedule). Absent: the library's
   * Math.random.
   */
  reconnectRng?: () => number;
}

/**
 * What a client of a target can do, declared next to its constructor so runners choose by
 * capability instead of by target name. The registry test (registry.test.ts) connects every
 * declared client to the real server and checks each claim.
 */
export interface ClientCapabilities {
  /** Who reconnects after a drop: the client library itself, or the runner (`TargetClient.reconnect()`, engine/targets/reconnect.ts). */
  reconnect: 'manual' | 'library';
  /**
   * What a reconnect can restore: `none` (at-most-once: ws, default Socket.IO), `session` (Socket.IO
   * Connection State Recovery: the session or nothing), `history` (AnyCable's extended protocol:
   * session restore and history by offset).
   */
  resume: ResumeProtocol;
  /** Arrivals carry the stream offset (`ArrivedMessage.offset`). */
  offsets: boolean;
  /** Arrivals carry the stream epoch (`ArrivedMessage.epoch`): a new one means the broker came back empty. */
  epochs: boolean;
  /** `TargetClient.whisper()` relays client-to-client messages through the server. */
  whispers: boolean;
  /**
   * The library behind the client, by its npm name (informational for a target of your own).
   * Two names make the runners count reconnect attempts inside the library: '@anycable/core' (a
   * counting WebSocket class passed as `cableOptions.websocketImplementation`) and
   * 'socket.io-client' (its Manager read off the client). Declare them only with those adapters.
   */
  library: '@anycable/core' | 'socket.io-client' | 'ws' | 'lean' | (string & {});
}

/**
 * Every lean client's capabilities, whatever its target: one bare socket that never reconnects by
 * itself and subscribes afresh on `reconnect()`, so nothing is resumed; no offsets, no whispers.
 */
export const LEAN_CAPABILITIES: Readonly<ClientCapabilities> = Object.freeze({ reconnect: 'manual', resume: 'none', offsets: false, epochs: false, whispers: false, library: 'lean' });

/**
 * A target declares its lean client or says why it has none; the type admits nothing in between,
 * so a new target cannot forget the question.
 */
type LeanSupport =
  | {
      /** The lean client (engine/targets/lean-client.ts over the target's wire): tens of thousands per process. */
      createLeanClient(opts: ClientOptions): LeanClient;
      leanUnsupported?: never;
    }
  | { createLeanClient?: never; leanUnsupported: string };

interface TargetBase {
  name: string;
  description: string;
  /** Who reconnects the full client after a drop; always `capabilities.reconnect` (defineTarget copies it; read by many runners). */
  reconnect: 'manual' | 'library';
  /** Minimum offline time after a drop for manual targets (the benchmark's MIN_OFFLINE_MS). */
  offlineFloorMs: number;
  /** Whether the protocol promises replay of messages missed while offline: `capabilities.resume !== 'none'` (defineTarget derives it). */
  replays: boolean;
  /** The full client's capabilities (the lean client's are LEAN_CAPABILITIES). */
  capabilities: Readonly<ClientCapabilities>;
  /** Local service to start for this target, with its args; undefined for external-only targets. */
  service?: { name: 'ws' | 'uws' | 'socketio' | 'replay' | 'soketi'; args: string[] };
  /**
   * Why the target cannot run on this machine (uws: its native binary does not load here), or
   * undefined when it can. Such a target is left out of the default set, and naming it fails with
   * this reason (RR_ERR_TARGET_UNAVAILABLE) instead of breaking the run.
   */
  unavailable?(): string | undefined;
  /** The service needs a Redis at REDIS_URL: left out of the default target set. */
  needsRedis?: boolean;
  /** Why its local service cannot run as `--workers N` (processes behind one port); undefined when it can. */
  noWorkers?: string;
  /**
   * Why `--reconnect-strategy tuned` cannot apply: a library-driven client whose backoff nothing
   * outside it can replace (pusher-js). `npm run bench` then runs no tuned column for it, and its
   * client refuses the option with this reason.
   */
  ownBackoff?: string;
  /** The full client: the protocol's official library (@anycable/core, socket.io-client, ws) behind TargetClient. */
  createClient(opts: ClientOptions): TargetClient;
  /** How its server takes a message to publish (engine/targets/publish.ts); absent: `POST <url>/_broadcast` (broadcastPublish). */
  publish?: TargetPublish;
}

/** One target: its service, its two client constructors (full, lean or why not) and the full client's capabilities. */
export type TargetDefinition = TargetBase & LeanSupport;

/** What a target file declares; `defineTarget` derives `reconnect` and `replays` from the capabilities so they are said once. */
export type TargetDeclaration = Omit<TargetBase, 'reconnect' | 'replays'> & LeanSupport;

export function defineTarget(d: TargetDeclaration): TargetDefinition {
  return { ...d, reconnect: d.capabilities.reconnect, replays: d.capabilities.resume !== 'none' } as TargetDefinition;
}
