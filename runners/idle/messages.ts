/**
 * Idle runner: parent ↔ worker process messages. A discriminated union on `type`; both sides
 * switch over it exhaustively, so a new message kind is a compile error until handled.
 */
export interface WorkerTally {
  attempted: number;
  /** TCP + WebSocket upgrade done. */
  connected: number;
  /** The protocol's greeting arrived (AnyCable welcome, Socket.IO CONNECT ack, ws open). */
  welcomed: number;
  subscribed: number;
  failed: number;
  /** fd_limit / port_exhaustion (the runner's own limits), timeout, target. */
  failureCauses: Record<string, number>;
  /** Up to 5 distinct failure messages, e.g. `target: ECONNRESET`, so a cause can be diagnosed. */
  failureSamples: string[];
  /** Epoch ms of the last subscription confirmed (0 = none). */
  lastSubscribedAt: number;
  /** Subscribed connections still open right now. */
  open: number;
  /** Subscribed connections lost after subscribing, by reason. */
  disconnects: Record<string, number>;
  baselineRssBytes: number;
  peakRssBytes: number;
  loopLagP99Ms: number;
}

export interface WorkerStart {
  type: 'start';
  target: string;
  url: string;
  stream: string;
  /** This worker's clients are the global indexes first, first + stride, ... (count of them). */
  first: number;
  stride: number;
  count: number;
  /** Global connects per second; client i is due at startAt + i * 1000 / rampPerSec. */
  rampPerSec: number;
  startAt: number;
  /** Source addresses 127.0.0.1..N the clients are dealt over. */
  addresses: number;
  connectTimeoutMs: number;
  /** AnyCable `?pi=` ping period asked of the server, seconds; 0 = the server's default. */
  pingInterval?: number;
}

export type ParentToWorker = WorkerStart | { type: 'stop' };

export type WorkerToParent =
  | { type: 'ready'; pid: number; fdLimit: number | null; baselineRssBytes: number }
  | { type: 'progress' | 'ramped' | 'done'; tally: WorkerTally }
  | { type: 'error'; message: string };
