import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface ProcessMetrics {
  pid: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** CPU use since the previous snapshot, percent of one core. */
  cpuPct: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  uptimeSec: number;
  eventLoopLagMs: { mean: number; p50: number; p99: number; max: number };
}

/** Samples this process: memory, CPU and event-loop lag (the lag histogram resets on each snapshot). */
export function createProcessMonitor(resolutionMs = 20) {
  const lag = monitorEventLoopDelay({ resolution: resolutionMs });
  lag.enable();
  let lastCpu = process.cpuUsage();
  let lastAt = process.hrtime.bigint();
  const ns = (v: number) => Math.round((v / 1e6) * 100) / 100;
  return {
    snapshot(): ProcessMetrics {
      const mem = process.memoryUsage();
      const cpu = process.cpuUsage();
      const now = process.hrtime.bigint();
      const wallUs = Number(now - lastAt) / 1000;
      const usedUs = cpu.user - lastCpu.user + (cpu.system - lastCpu.system);
      lastCpu = cpu;
      lastAt = now;
      // Lag beyond the sampling resolution is what matters: subtract the timer period itself.
      const over = (v: number) => Math.max(0, ns(v) - resolutionMs);
      const out: ProcessMetrics = {
        pid: process.pid,
        rssBytes: mem.rss,
        heapUsedBytes: mem.heapUsed,
        cpuPct: wallUs > 0 ? Math.round((usedUs / wallUs) * 1000) / 10 : 0,
        cpuUserMs: Math.round(cpu.user / 1000),
        cpuSystemMs: Math.round(cpu.system / 1000),
        uptimeSec: Math.round(process.uptime() * 10) / 10,
        eventLoopLagMs: {
          mean: over(lag.count ? lag.mean : resolutionMs * 1e6),
          p50: over(lag.count ? lag.percentile(50) : resolutionMs * 1e6),
          p99: over(lag.count ? lag.percentile(99) : resolutionMs * 1e6),
          max: over(lag.count ? lag.max : resolutionMs * 1e6),
        },
      };
      lag.reset();
      return out;
    },
    stop() {
      lag.disable();
    },
  };
}
