import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface RunnerHealth {
  runnerPeakRssMb: number;
  /** Event-loop delay of the runner itself beyond the sampling resolution, ms. */
  runnerLoopLagMs: { p50: number; p99: number; max: number };
  /** Share of 500 ms windows in which the runner's loop stalled more than `stallMs`. */
  runnerStalledWindowsPct: number;
}

/** RSS needs a file descriptor (/proc/self/stat); out of descriptors, skip the sample instead of crashing. */
export function rss(): number {
  try {
    return process.memoryUsage.rss();
  } catch {
    return 0;
  }
}

/**
 * Watches the runner's own process. Latency is measured on the runner's event loop, so a
 * stalled loop inflates it; reporting this lets the result blame the runner instead of the target.
 */
export function watchRunner(stallMs = 100) {
  const resolution = 10;
  const lag = monitorEventLoopDelay({ resolution });
  lag.enable();
  // A second histogram, reset on every read, for live progress lines.
  const recent = monitorEventLoopDelay({ resolution });
  recent.enable();
  let peakRss = rss();
  let windows = 0;
  let stalled = 0;
  let windowMaxStart = 0;
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, rss());
    windows++;
    const maxNow = lag.max / 1e6;
    if (maxNow - windowMaxStart > stallMs) stalled++;
    windowMaxStart = maxNow;
  }, 500);
  timer.unref();
  const over = (ns: number) => Math.max(0, Math.round((ns / 1e6 - resolution) * 10) / 10);
  return {
    /** Loop lag since the previous call (or the start), ms beyond the sampling resolution. */
    recentLag(): { p99: number; max: number } {
      const out = recent.count ? { p99: over(recent.percentile(99)), max: over(recent.max) } : { p99: 0, max: 0 };
      recent.reset();
      return out;
    },
    stop(): RunnerHealth {
      clearInterval(timer);
      lag.disable();
      recent.disable();
      peakRss = Math.max(peakRss, rss());
      return {
        runnerPeakRssMb: Math.round((peakRss / 1048576) * 10) / 10,
        runnerLoopLagMs: lag.count ? { p50: over(lag.percentile(50)), p99: over(lag.percentile(99)), max: over(lag.max) } : { p50: 0, p99: 0, max: 0 },
        runnerStalledWindowsPct: windows ? Math.round((stalled / windows) * 1000) / 10 : 0,
      };
    },
  };
}
