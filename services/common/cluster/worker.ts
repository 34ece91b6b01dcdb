import cluster from 'node:cluster';
import type { WorkerReport } from './stats.ts';
import { isObj, sendToPrimary } from './wire.ts';

/** A forked worker of `envKey`'s service: the primary put the options there (JSON). */
export const isWorkerOf = (envKey: string): boolean => cluster.isWorker && process.env[envKey] !== undefined;

export function workerOptions<T>(envKey: string): T {
  return JSON.parse(process.env[envKey] ?? '{}') as T;
}

export interface WorkerLifecycle {
  /** The port the worker's server listens on (the primary's shared handle). */
  port: number;
  stopGraceMs: number;
  /** Say goodbye to this worker's clients and close. */
  stop(): Promise<void>;
  /** This worker's counters, reported to the primary every second (pid and RSS are added). */
  report(): Omit<WorkerReport, 'pid' | 'rssBytes'> & Record<string, number>;
}

/**
 * A worker's side of the pool: stop on the primary's `stop`, a signal, or the primary going
 * away (with a hard exit past the grace), report counters every second, then say `listening`.
 */
export function serveAsWorker(o: WorkerLifecycle): void {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), o.stopGraceMs + 2000).unref();
    try {
      await o.stop();
    } finally {
      process.exit(0);
    }
  };
  process.on('message', (m: unknown) => {
    if (isObj(m) && m.type === 'stop') void stop();
  });
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  process.on('disconnect', () => void stop());
  const report = () => sendToPrimary({ type: 'worker.stats', stats: { ...o.report(), pid: process.pid, rssBytes: process.memoryUsage.rss() } });
  report();
  setInterval(report, 1000).unref();
  sendToPrimary({ type: 'listening', port: o.port });
}
