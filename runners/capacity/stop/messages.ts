import type { WorkerStart, WorkerTally } from '../../idle/messages.ts';

/** S6 holder processes: parent ↔ holder messages (a discriminated union on `type`), an idle worker's ramp share over many streams. */
export interface HolderStart extends Omit<WorkerStart, 'stream' | 'pingInterval'> {
  /** Client i subscribes `${streamPrefix}/${i % streams}`; that stream's payloads carry runId `${runId}/${i % streams}`. */
  streamPrefix: string;
  streams: number;
  runId: string;
}

export type ParentToHolder = HolderStart | { type: 'stop' };

export interface HolderTally extends Pick<WorkerTally, 'subscribed' | 'failed' | 'failureCauses' | 'loopLagP99Ms'> {
  /** Subscribed clients by what the server told them as it went away (see toldLabel). */
  told: Record<string, number>;
}

export type HolderToParent =
  | { type: 'ready' }
  | { type: 'ramped'; tally: HolderTally }
  /** Flattened [client, seq, latencyMs, arrivedAt] quadruples since the last batch. */
  | { type: 'arrivals'; rows: number[] }
  | { type: 'done'; tally: HolderTally }
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
