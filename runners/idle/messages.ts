import type { TargetModuleReport } from '../../engine/targets/user-module.ts';
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
  /** Subscribed connections by what the server told them as it went away (see toldLabel); at the stop, those still open. */
  told: Record<string, number>;
  baselineRssBytes: number;
  peakRssBytes: number;
  loopLagP99Ms: number;
  /** A user's target file: its clients' hook faults (the final tally only). */
  targetModule?: TargetModuleReport;
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
  /**
   * Capacity S6's holders: client i subscribes `${stream}/${i % streams}`, and every arrival of
   * that stream's payloads (runId `${runId}/${i % streams}`) goes to the parent in batches.
   */
  streams?: number;
  runId?: string;
}

export type ParentToWorker = WorkerStart | { type: 'stop' };

export type WorkerToParent =
  | { type: 'ready'; pid: number; fdLimit: number | null; baselineRssBytes: number }
  | { type: 'progress' | 'ramped' | 'done'; tally: WorkerTally }
  /** Flattened [client, seq, latencyMs, arrivedAt] quadruples since the last batch. */
  | { type: 'arrivals'; rows: number[] }
  | { type: 'error'; message: string };

/**
 * What a client was told, from the lean client's disconnect detail: a protocol goodbye
 * (AnyCable `disconnect <reason>`, Socket.IO's DISCONNECT packet), a WebSocket close code, or
 * nothing at all (the connection was reset or closed without a word).
 */
export function toldLabel(reason: string, detail: string | undefined): string {
  if (detail?.startsWith('disconnect ')) return detail;
  if (detail?.startsWith('socket.io') || detail?.startsWith('engine.io')) return detail;
  const code = /^(\d{4})$/.exec(detail ?? '')?.[1] ?? /closed by the server \((\d{4})\)/.exec(detail ?? '')?.[1];
  if (code) return `close ${code}`;
  if (reason === 'transport_error') return `nothing: connection error (${detail ?? '?'})`;
  return 'nothing: closed without a close frame';
}
