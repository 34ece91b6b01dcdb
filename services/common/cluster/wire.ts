import type { Worker } from 'node:cluster';

/** A message pipe in one direction pair; `process` in a worker, a `cluster.Worker` in the primary, or an in-memory pair in tests. */
export interface IpcChannel<Out, In> {
  send(msg: Out): void;
  onMessage(fn: (msg: In) => void): () => void;
}

/** What every worker tells the pool, whatever the service. */
export type PoolMessage =
  | { type: 'listening'; port: number }
  /** The worker's own counters, every second (see stats.ts). */
  | { type: 'worker.stats'; stats: Record<string, number> };

const ignore = () => {};

/** Send to a worker; with a callback a send to a dying worker reports EPIPE there instead of an 'error' event. */
export function sendTo(w: Worker, msg: unknown): void {
  if (w.isConnected()) w.send(msg as object, undefined, undefined, ignore);
}

/** Send to the primary (from a worker); a no-op once the channel is gone. */
export function sendToPrimary(msg: unknown): void {
  if (process.connected) process.send!(msg, undefined, undefined, ignore);
}

/** The primary's end of one worker's IPC. */
export function workerChannel<Out, In>(w: Worker): IpcChannel<Out, In> {
  return {
    send: (m) => sendTo(w, m),
    onMessage: (fn) => {
      w.on('message', fn);
      return () => w.off('message', fn);
    },
  };
}

/** A worker's end of its IPC with the primary. */
export function processChannel<Out, In>(): IpcChannel<Out, In> {
  return {
    send: (m) => sendToPrimary(m),
    onMessage: (fn) => {
      const h = (m: unknown) => fn(m as In);
      process.on('message', h);
      return () => process.off('message', h);
    },
  };
}

export const isObj = (m: unknown): m is { type: unknown } => typeof m === 'object' && m !== null && 'type' in m;
