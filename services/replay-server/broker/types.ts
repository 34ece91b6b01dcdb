/**
 * The one storage seam of the replay server: stream history (offsets, epochs, retention) and the
 * session cache live behind `Broker`, and it is also the fan-out bus, so that every process of a
 * cluster sees one ordering. Every method is async so a Redis (or IPC) broker fits unchanged.
 *
 * Implementations: `memory.ts` (one process owns everything), `ipc.ts` (cluster workers reach the
 * primary's memory broker over IPC). A Redis broker would implement the same interface.
 */

/** What a front end hands the broker: `message` is already JSON text (see protocol/codec toMessageJson). */
export interface PublishItem {
  stream: string;
  message: string;
  /** Skip the connection with this sid on live delivery (`meta.exclude_socket`, whisper sender). */
  exclude?: string;
  /** Not stored, no offset (whispers). */
  transient?: boolean;
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

export type HistoryMissReason = 'unknown_epoch' | 'stream_not_found' | 'offset_evicted' | 'offset_ahead';

export type HistoryResult = { ok: true; messages: StreamMessage[] } | { ok: false; reason: HistoryMissReason };

export interface BrokerStats {
  kind: string;
  historyStreams: number;
  historyMessages: number;
  sessions: number;
  published: number;
  /** Cluster mode: every worker's latest counters (pushed each second) and their sums. */
  cluster?: ClusterStats;
}

/** What each worker reports about itself. */
export interface WorkerStats {
  pid: number;
  connections: number;
  subscriptions: number;
  deliveries: number;
}

export interface ClusterStats {
  workers: number;
  connections: number;
  subscriptions: number;
  deliveries: number;
  perWorker: WorkerStats[];
}

export interface BrokerOptions {
  /** Messages kept per stream. @default 100 */
  historyLimit: number;
  /** Seconds a message stays in history. @default 300 */
  historyTtlSec: number;
  /** Seconds a session stays restorable. 0 disables the session cache. @default 300 */
  sessionTtlSec: number;
}

export type MessagesListener = (msgs: readonly StreamMessage[]) => void;

export interface Broker {
  readonly kind: string;
  /** Store (unless transient), assign offsets and fan out to every `onMessages` listener, in order. */
  publish(items: readonly PublishItem[]): Promise<void>;
  /** Live fan-out; returns a disposer. */
  onMessages(listener: MessagesListener): () => void;
  /** Messages after `position` (exclusive) or since a timestamp (inclusive), or why it cannot be served. */
  history(stream: string, position: HistoryPosition): Promise<HistoryResult>;
  /** Store a session's state (opaque string) for `sessionTtlSec` from now. */
  commitSession(sid: string, state: string): Promise<void>;
  /** The state of a live session, or undefined (unknown or expired). Does not delete it. */
  restoreSession(sid: string): Promise<string | undefined>;
  stats(): Promise<BrokerStats>;
  close(): Promise<void>;
}
