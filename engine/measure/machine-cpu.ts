import { fromProc, parseCpuTicks } from './proc.ts';

/** The whole machine's CPU over a window, from /proc/stat: every process, the kernel and softirq. */
export interface MachineCpu {
  cores: number;
  /** Share of all cores busy over the window, %. */
  busyPct: number;
  /** Share of all cores idle (idle + iowait), %. */
  idlePct: number;
}

// Busy here counts irq and softirq too: the kernel's loopback work is what a runner must see.
const readTotals = fromProc('/proc/stat', (text) => {
  const t = parseCpuTicks(text);
  if (!t) return undefined;
  const busy = t.user + t.nice + t.system + t.irq + t.softirq + t.steal;
  return { busy, idle: t.idle + t.iowait, cores: text.split('\n').filter((l) => /^cpu\d+ /.test(l)).length };
});

/**
 * Per-process figures miss what loaders and targets share on one machine: the kernel's loopback
 * work, softirq and neighbours' jobs. A window of the machine's own counters says whether any
 * core was left, so a runner can tell "the target ran out" from "the machine ran out".
 * Null where /proc/stat is not readable (not Linux).
 */
export function watchMachineCpu(): { stop(): MachineCpu | null } {
  const start = readTotals();
  return {
    stop() {
      const end = readTotals();
      if (!start || !end) return null;
      const busy = end.busy - start.busy;
      const idle = end.idle - start.idle;
      const total = busy + idle;
      if (total <= 0) return null;
      const pct = (x: number) => Math.round((1000 * x) / total) / 10;
      return { cores: end.cores, busyPct: pct(busy), idlePct: pct(idle) };
    },
  };
}
