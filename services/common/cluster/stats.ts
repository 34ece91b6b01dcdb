import type { Worker } from 'node:cluster';

/** What each worker reports about itself every second: its pid, its RSS and its counters. */
export interface WorkerReport {
  pid: number;
  rssBytes: number;
  connections: number;
}

/**
 * /metrics `cluster` in every service's cluster mode: each counter summed over the workers'
 * latest reports (at most about a second old), `rssBytes` including the primary's own, and
 * each worker's report.
 */
export type ClusterSummary<R extends WorkerReport = WorkerReport> = { [K in Exclude<keyof R, 'pid'>]: number } & {
  workers: number;
  primaryRssBytes: number;
  perWorker: R[];
};

export class StatsBoard<R extends WorkerReport = WorkerReport> {
  private readonly latest = new Map<Worker, R>();

  set(w: Worker, r: R): void {
    this.latest.set(w, r);
  }

  delete(w: Worker): void {
    this.latest.delete(w);
  }

  summary(workers: number): ClusterSummary<R> {
    const perWorker = [...this.latest.values()];
    const sums: Record<string, number> = { connections: 0, rssBytes: 0 };
    for (const r of perWorker) {
      for (const [k, v] of Object.entries(r)) if (k !== 'pid' && typeof v === 'number') sums[k] = (sums[k] ?? 0) + v;
    }
    const primaryRssBytes = process.memoryUsage.rss();
    sums.rssBytes! += primaryRssBytes;
    return { ...sums, workers, primaryRssBytes, perWorker } as ClusterSummary<R>;
  }
}
