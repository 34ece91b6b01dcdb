import type { IdleOptions } from './options.ts';
import type { IdleValidityFlag } from './validity.ts';

/** The idle runner's result: the benchmark's IdleResult fields plus Rebound's runner and target figures. */
export interface IdleResult {
  test: 'idle';
  target: string;
  shardLabel: string | null;
  startedAt: string;
  params: Omit<IdleOptions, 'url'> & { url: undefined };
  clients: number;
  connected: number;
  welcomed: number;
  subscribed: number;
  failed: number;
  /** fd_limit / port_exhaustion: the runner's own limits; timeout / target: the target's side. */
  failureCauses: Record<string, number>;
  /** Distinct failure messages (at most 10) over all workers. */
  failureSamples: string[];
  openAtEndOfHold: number;
  disconnectedDuringHold: Record<string, number>;
  rampElapsedMs: number;
  /** From the first scheduled connect to the last subscription; null unless every client subscribed. */
  timeToAllSubscribedMs: number | null;
  holdElapsedMs: number;
  totalElapsedMs: number;
  aborted: boolean;
  runner: {
    workers: number;
    fdLimitPerWorker: number | null;
    sourceAddresses: number;
    rssBaselineBytes: number;
    rssPeakBytes: number;
    /** (Σ worker peak RSS − Σ worker baseline RSS) / subscribed. */
    rssPerClientBytes: number | null;
    loopLagP99Ms: number;
    perWorker: { worker: number; attempted: number; subscribed: number; failed: number; peakRssBytes: number; loopLagP99Ms: number }[];
  };
  targetMetrics: {
    /** proc-tree: RSS/CPU of the local target's whole process tree; metrics: its /metrics. */
    source: 'proc-tree' | 'metrics';
    metricsAnswered: number;
    samples: number;
    baselineRssBytes: number | null;
    peakRssBytes: number | null;
    /** (peak RSS − baseline) / subscribed. */
    bytesPerConnection: number | null;
    peakCpuPct: number | null;
    avgCpuPct: number | null;
    peakConnections: number;
    /** [ms since start, rssBytes, cpuPct, connections], at most ~300 points. */
    series: (number | null)[][];
  };
  /** Runner-side client counts each second: [ms since the ramp began, connected, subscribed, failed, open], at most ~300 rows (absent in older results). */
  clientSeries?: number[][];
  /** The benchmark's rebaseline names. */
  peakMemoryMb: number | null;
  peakCpuPercent: number | null;
  ramKbPerConnected: number | null;
  validity: { valid: boolean; flags: IdleValidityFlag[] };
}
