import { readdirSync, readFileSync } from 'node:fs';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { processTree } from '../core/target-usage.ts';
import { assertAvailable } from '../targets/index.ts';
import type { ScenarioContext } from './types.ts';

/**
 * One target instance for one measured run: the external target at ctx.url, or a fresh local
 * service (port 0) started the way every runner starts it, optionally with a lowered open-file
 * limit (a small container), and stopped afterwards. Scenarios that compare runs start a fresh
 * instance per run so one run's heap never becomes the next one's baseline.
 */
export interface TargetInstance {
  url: string;
  /** The local process (for /proc figures); undefined for an external target. */
  pid: number | undefined;
  handle: ServiceHandle | undefined;
  /** How the local process ended, if it has; external targets: null while /health answers. */
  exitStatus(): Promise<{ code: number | null; signal: string | null } | null>;
}

/** The `--workers N` the suite starts local targets with (`serverWorkers`); 0 = one process. */
export function serverWorkersOf(ctx: ScenarioContext): number {
  const i = ctx.serviceArgs?.indexOf('--workers') ?? -1;
  return i >= 0 && !ctx.url ? Number(ctx.serviceArgs![i + 1]) : 0;
}

/** A scenario's params, plus `serverWorkers` when its local targets ran as several processes. */
export function instanceParams<P extends object>(ctx: ScenarioContext, params: P): P & { serverWorkers?: number } {
  const workers = serverWorkersOf(ctx);
  return workers > 1 ? { ...params, serverWorkers: workers } : params;
}

/** Run `fn` on one target instance; `fdLimit` lowers a local service's open-file limit. */
export async function withInstance<T>(ctx: ScenarioContext, o: { fdLimit?: number }, fn: (t: TargetInstance) => Promise<T>): Promise<T> {
  if (ctx.url) {
    const url = ctx.url.replace(/\/+$/, '');
    return fn({ url, pid: undefined, handle: undefined, exitStatus: async () => ((await healthy(url)) ? null : { code: null, signal: 'unreachable' }) });
  }
  assertAvailable(ctx.target);
  const svc = ctx.target.service;
  if (!svc) throw new Error(`target "${ctx.target.name}" has no local service`);
  const h = await startService(svc.name, { args: [...svc.args, ...(ctx.serviceArgs ?? [])], ...(o.fdLimit ? { fdLimit: o.fdLimit } : {}) });
  try {
    return await fn({
      url: h.httpUrl,
      pid: h.pid,
      handle: h,
      exitStatus: async () => (h.child.exitCode !== null || h.child.signalCode !== null ? { code: h.child.exitCode, signal: h.child.signalCode } : null),
    });
  } finally {
    await h.stop(5000);
  }
}

/** GET /health within 3 s. */
export async function healthy(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(3000) });
    await r.arrayBuffer();
    return r.status < 500;
  } catch {
    return false;
  }
}

/** Open files of a process (its /proc/<pid>/fd entries) and its soft limit; nulls where /proc says nothing. */
export function fdUsage(pid: number): { open: number | null; limit: number | null } {
  let open: number | null = null;
  let limit: number | null = null;
  try {
    open = readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    // gone, or not ours to read
  }
  try {
    const m = /Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    limit = m ? Number(m[1]) : null;
  } catch {
    // idem
  }
  return { open, limit };
}

/** Memory the kernel could give a new process now (MemAvailable), in MB; os.freemem() would miss reclaimable cache. */
export function availableMemMb(): number {
  try {
    const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) return Math.round(Number(m[1]) / 1024);
  } catch {
    // not Linux: fall through
  }
  return Number.POSITIVE_INFINITY;
}

/**
 * Samples the target's open files and the machine's available memory once a second while a step
 * runs. A cluster (`--workers`) is a process tree: the fd figures are its busiest process's
 * (the limit is per process), and `processes` says how many there were.
 */
export function watchStep(pid: number | undefined, minFreeMb: number, onLowMemory: () => void) {
  let fdPeak: number | null = null;
  let fdLimit: number | null = null;
  let processes: number | null = null;
  let minAvailMb = availableMemMb();
  let low = false;
  const tick = () => {
    if (pid) {
      const tree = processTree(pid);
      processes = Math.max(processes ?? 0, tree.length);
      for (const p of tree) {
        const u = fdUsage(p);
        if (u.open !== null && u.open >= (fdPeak ?? 0)) {
          fdPeak = u.open;
          if (u.limit !== null) fdLimit = u.limit;
        }
      }
    }
    const avail = availableMemMb();
    minAvailMb = Math.min(minAvailMb, avail);
    if (avail < minFreeMb && !low) {
      low = true;
      onLowMemory();
    }
  };
  tick();
  const timer = setInterval(tick, 1000);
  return {
    stop() {
      clearInterval(timer);
      tick();
      return { fdPeak, fdLimit, processes, minAvailMb: Number.isFinite(minAvailMb) ? minAvailMb : null, lowMemory: low };
    },
  };
}

export const median = (xs: readonly number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : Math.round((s[m - 1]! + s[m]!) / 2);
};
