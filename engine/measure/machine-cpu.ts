import { fromProc } from './proc.ts';

/** The whole machine's CPU over a window, from /proc/stat: every process, the kernel and softirq. */
export interface MachineCpu {
  cores: number;
  /** Share of all cores busy over the window, %. */
  busyPct: number;
  /** Share of all cores idle (idle + iowait), %. */
  idlePct: number;
}

const readTotals = fromProc('/proc/stat', (text) => {
  const lines = text.split('\n');
  const f = lines[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  return { busy, idle, cores: lines.filter((l) => /^cpu\d+ /.test(l)).length };
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
