import type { PoolHealth } from '../../common/cluster/pool.ts';
import type { ClusterSummary, WorkerReport } from '../../common/cluster/stats.ts';

/**
 * The one storage seam of the replay server: stream history (offsets, epochs, retention) and the
 * session cache live behind `Broker`, and it is also the fan-out bus, so that every process of a
 * cluster sees one ordering. Every method is async so a Redis (or IPC) broker fits unchanged.
 *
 * Implementations: `memory.ts` (one process owns everything), `ipc.ts` (cluster workers reach the
 * primary's memory broker over IPC), `redis.ts` (several nodes behind one Redis).
 */

/** What a front end hands the broker: `message` is already JSON text (see protocol/codec toMessageJson). */
export interface PublishItem {
  stream: string;
  message: string;
  /** Skip the connection with this sid on live delivery (`meta.exclude_socket`, whisper sender). */
  exclude?: string;
  /** Not stored, no offset (whispers). */
  transient?: boolean;
  /** A publisher's retry key: a second item with it within `idempotencyWindowSec` is not stored or delivered again. */
  idempotencyKey?: string;
}

/** A message after the broker accepted it. Stored messages carry `epoch` and `offset` (from 1 per stream). */
export interface StreamMessage {
  stream: string;
  message: string;
  epoch?: string;
  offset?: number;
  /** Unix seconds when stored (for `since` history). */
  ts?: number;
  exclude?: string;
}

/** Where a history read starts: after a known position, or from a unix-seconds timestamp. */
export type HistoryPosition = { epoch: string; offset: number } | { since: number };

/** `broker_unavailable`: the broker could not answer (set by the connection when a read throws). */
export type HistoryMissReason = 'unknown_epoch' | 'stream_not_found' | 'offset_evicted' | 'offset_ahead' | 'broker_unavailable';

/** `more`: a paged read stopped early; continue after the last message's offset. */
export type HistoryResult = { ok: true; messages: StreamMessage[]; more?: boolean } | { ok: false; reason: HistoryMissReason };

/** Page bound for a history read: about `maxBytes` of message text, but always at least one message. */
export interface HistoryPage {
  maxBytes: number;
}

/** An incremental session change: identifiers added or removed. An empty change refreshes the TTL. */
export interface SessionChange {
  add?: readonly string[];
  remove?: readonly string[];
}

export interface BrokerStats {
  kind: string;
  historyStreams: number;
  historyMessages: number;
  sessions: number;
  /** Bytes the session store accounts for (identifiers + a fixed overhead per session). */
  sessionBytes?: number;
  /** Sessions dropped by the count/bytes caps before their TTL. */
  sessionsEvicted?: number;
  published: number;
  /** Message bytes held in history (all streams), and what the count/byte caps evicted (not TTL). */
  historyBytes?: number;
  historyEvictedBytes?: number;
  historyEvictedMessages?: number;
  /** What the streams themselves cost (STREAM_OVERHEAD_BYTES + name each), counted with historyBytes against historyMaxBytes. */
  streamBytes?: number;
  /** Whole streams dropped by maxStreams or the byte budget before 10 x TTL of silence (their history, then their epoch, forgotten). */
  streamsEvicted?: number;
  /** Items dropped as retries of an idempotency key already stored. */
  duplicatesSuppressed?: number;
  /** Redis broker: feed entries this node never saw (the feed was trimmed while it was cut off). */
  feedGaps?: number;
  /** Redis broker: service epochs seen to end (the epoch key gone or replaced: Redis lost its data). */
  epochChanges?: number;
  /** Redis broker: times the feed's sequence went backwards (Redis lost its data). */
  feedResets?: number;
  /** Redis broker: the health probe and the deadline guard (docs/replay-server.md, "A sick Redis"). */
  redis?: { ok: boolean; reason?: string; probes: number; probeFailures: number; commandFailures: number; timeouts: number; deadlineMs: number };
  /** Cluster mode: every worker's latest counters (pushed each second) and their sums. */
  cluster?: ClusterStats;
}

/** What each worker reports about itself (common/cluster/stats.ts adds pid and RSS). */
export interface WorkerStats extends WorkerReport {
  subscriptions: number;
  deliveries: number;
}

/** /metrics `cluster`: the workers' reports summed, the pool's health, and rolling reloads completed. */
export type ClusterStats = ClusterSummary<WorkerStats> & Partial<PoolHealth> & { reloads?: number };

export interface BrokerOptions {
  /** Messages kept per stream. @default 100 */
  historyLimit: number;
  /** Seconds a message stays in history. @default 300 */
  historyTtlSec: number;
  /** Seconds a session stays restorable. 0 disables the session cache. @default 300 */
  sessionTtlSec: number;
  /** Message bytes (string length) kept per stream; the oldest go first (the newest always stays). @default unbounded */
  historyStreamMaxBytes?: number;
  /**
   * Bytes kept in all streams' history together: message bytes plus each stream's fixed overhead
   * and name. An expired or emptied least recently published stream goes first, then the oldest
   * stored message, then the least recently published stream. @default unbounded
   */
  historyMaxBytes?: number;
  /** Streams kept (with history or only an offset counter); the least recently published is evicted first. @default 100_000 */
  maxStreams?: number;
  /** Seconds an idempotency key is remembered. @default 300 */
  idempotencyWindowSec?: number;
  /** Sessions kept; the least recently changed is evicted first. @default unbounded (the server passes its option) */
  maxSessions?: number;
  /** Bytes of session state kept (identifiers + SESSION_OVERHEAD_BYTES each). @default unbounded */
  maxSessionStoreBytes?: number;
}

export type MessagesListener = (msgs: readonly StreamMessage[]) => void;

export interface Broker {
  readonly kind: string;
  /** Store (unless transient), assign offsets and fan out to every `onMessages` listener, in order. */
  publish(items: readonly PublishItem[]): Promise<void>;
  /** Live fan-out; returns a disposer. */
  onMessages(listener: MessagesListener): () => void;
  /**
   * Messages after `position` (exclusive) or since a timestamp (inclusive), or why it cannot be
   * served. With `page`, at most about `page.maxBytes` of them and `more` when it stopped early;
   * an implementation may page without being asked (IPC does, at 1 MiB), so callers check `more`.
   */
  history(stream: string, position: HistoryPosition, page?: HistoryPage): Promise<HistoryResult>;
  /** Store a session's whole state (opaque string) for `sessionTtlSec` from now. */
  commitSession(sid: string, state: string): Promise<void>;
  /** Apply an incremental change to a session (created when absent) and refresh its TTL. */
  updateSession(sid: string, change: SessionChange): Promise<void>;
  /** The state of a live session, or undefined (unknown or expired). Does not delete it. */
  restoreSession(sid: string): Promise<string | undefined>;
  stats(): Promise<BrokerStats>;
  /**
   * Live fan-out lost messages it cannot deliver in order any more (e.g. Redis's feed was trimmed
   * past a node that was cut off): the server then sends its clients away to resume through
   * session restore and history, which Redis still has. Returns a disposer.
   */
  onResync?(listener: (why: string) => void): () => void;
  /** True when a stream epoch belongs to a service epoch this broker saw end (Redis came back empty). */
  isPastEpoch?(streamEpoch: string): boolean;
  /** Whether the storage is reachable now (brokers that can lose it, e.g. Redis); absent means always up. */
  health?(): { ok: boolean; reason?: string };
  close(): Promise<void>;
}
