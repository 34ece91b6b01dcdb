import { readFileSync, readdirSync } from 'node:fs';

/** A local target's memory and CPU over time (the service process and its descendants, e.g. workers). */
export interface TargetUsage {
  /** Seconds since publishing began. */
  tSec: number[];
  rssMb: number[];
  /** CPU time per wall time over the previous sample, % of one core (can exceed 100 with workers). */
  cpuPct: number[];
}

/** /proc reports CPU time in USER_HZ ticks, fixed at 100 on Linux whatever the kernel's HZ. */
const TICKS_PER_SEC = 100;
/** A day of samples at most: a bound, whatever the run length. */
const MAX_SAMPLES = 86_400;

/** The process and its descendants (bounded walk; processes that exited in between are skipped). */
function tree(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length && out.length < 256) {
    const p = queue.shift()!;
    out.push(p);
    try {
      for (const t of readdirSync(`/proc/${p}/task`)) {
        const kids = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim();
        if (kids) queue.push(...kids.split(/\s+/).map(Number));
      }
    } catch {
      // Gone, or no children file on this kernel: count what we have.
    }
  }
  return out;
}

function sample(pid: number): { ticks: number; rssKb: number } | null {
  let ticks = 0;
  let rssKb = 0;
  let seen = 0;
  for (const p of tree(pid)) {
    try {
      // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
      rssKb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
      seen++;
    } catch {
      // Exited between listing and reading.
    }
  }
  return seen ? { ticks, rssKb } : null;
}

/**
 * Sample a local target's RSS and CPU once per `intervalMs` from /proc. Only for targets this
 * runner started (it knows their pid) on Linux; otherwise `stop` returns null and the report
 * says the target was not sampled.
 */
export function watchTarget(pid: number, intervalMs = 1000) {
  const at: number[] = [];
  const rssMb: number[] = [];
  const cpuPct: number[] = [];
  let prev = sample(pid);
  let prevAt = Date.now();
  const timer = setInterval(() => {
    const s = sample(pid);
    const now = Date.now();
    if (!s || !prev || at.length >= MAX_SAMPLES) return;
    at.push(now);
    rssMb.push(Math.round(s.rssKb / 102.4) / 10);
    cpuPct.push(Math.round(((s.ticks - prev.ticks) / TICKS_PER_SEC / ((now - prevAt) / 1000)) * 1000) / 10);
    prev = s;
    prevAt = now;
  }, intervalMs);
  timer.unref();
  return {
    /** Stop sampling; times become seconds since `publishStart` (epoch ms). */
    stop(publishStart: number): TargetUsage | null {
      clearInterval(timer);
      if (at.length === 0) return null;
      return { tSec: at.map((t) => Math.round((t - publishStart) / 100) / 10), rssMb, cpuPct };
    },
  };
}
