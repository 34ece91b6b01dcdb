/**
 * One client-adapter interface for every protocol. Runners never touch a protocol library
 * directly: they connect, subscribe, listen for messages, drop and close through this.
 */

/** Why a client lost its connection; aggregated in reports. */
export type DisconnectReason =
  | 'dropped' // we force-closed the socket (chaos)
  | 'server_closed' // the server closed it (close frame, restart, too_slow...)
  | 'transport_error' // socket error / reset / timeout noticed by the library
  | 'closed'; // we closed it on purpose

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

export interface TargetDefinition {
  name: string;
  description: string;
  /** Who reconnects after a drop: the runner ('manual') or the client library ('library'). */
  reconnect: 'manual' | 'library';
  /** Minimum offline time after a drop for manual targets (the benchmark's MIN_OFFLINE_MS). */
  offlineFloorMs: number;
  /** Whether the protocol promises replay of messages missed while offline. */
  replays: boolean;
  /** Local service to start for this target, with its args; undefined for external-only targets. */
  service?: { name: 'ws' | 'uws' | 'socketio' | 'replay'; args: string[] };
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
  createClient(opts: ClientOptions): TargetClient;
}
