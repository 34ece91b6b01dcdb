/** Parent ↔ client process messages of the sick-Redis runner (IPC). */

export interface ClientsStart {
  type: 'start';
  /** Node base URLs; client i goes to urls[i % urls.length]. */
  urls: string[];
  stream: string;
  runId: string;
  /** Global index of this process's first client, and how many it holds. */
  first: number;
  count: number;
  /** Connects per second in this process. */
  rampPerSec: number;
  reconnectStrategy: string;
}

/** `drop`: socket terminated, the library reconnects at once; `away`: closed cleanly and reconnected after `ms`. */
export type ParentToClients = ClientsStart | { type: 'drop'; clients: number[] } | { type: 'away'; clients: number[]; ms: number } | { type: 'stop' };

/**
 * Arrivals, batched: flat [client, seq, offset, epochIndex] quadruples (offset -1: none; epoch -1:
 * none); epoch strings are announced once each (`epochs` from `epochBase` on).
 */
interface ArrivalBatch {
  type: 'arrivals';
  data: number[];
  epochBase: number;
  epochs: string[];
  /**
   * History rejections since the last batch, in order with the arrivals: [client, arrivals before
   * it in `data` (quadruples), reason ('' when the server gave none)]. The order places a
   * rejection at the client's position then (engine/measure/epoch-book.ts, broker_unavailable).
   */
  rejected: [client: number, at: number, reason: string][];
  disconnects: Record<string, number>;
}

export type ClientsToParent =
  | ArrivalBatch
  | { type: 'ready'; connected: number; failed: number; failureCauses: Record<string, number> }
  | { type: 'stopped'; peakRssMb: number; loopLagP99Ms: number; foreign: number };
