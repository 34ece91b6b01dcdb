import { ReboundError } from '../../lib/errors.ts';
import { medianOf } from '../../lib/figures.ts';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { processTree } from '../../services/common/process-info.ts';
import { assertAvailable } from '../../engine/targets/index.ts';
import { fdLimitOf, meminfo, openFds } from '../../engine/measure/proc.ts';
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

/**
 * How long a local target may take to report that it listens. A cluster primary reports only once
 * every worker listens, and each of its N + 1 processes loads Node and compiles the service
 * through tsx at the same time: on a loaded 2-core machine `--workers 3` took 12-19 s and one
 * process over 20 s, so spawn's fixed 20 s default failed healthy starts. The deadline only ends
 * a start that hangs (a worker the pool keeps respawning); a good start returns when it listens.
 */
export const START_MS_PER_PROCESS = 30_000;
export const startDeadlineMs = (workers: number): number => START_MS_PER_PROCESS * (workers > 1 ? workers + 1 : 1);

/** Whether `err` is a local target that did not start (withInstance's), not a failure of the run on it. */
export const isTargetStartError = (err: unknown): err is ReboundError => err instanceof ReboundError && err.details?.phase === 'target start';

/** Run `fn` on one target instance; `fdLimit` lowers a local service's open-file limit. */
export async function withInstance<T>(ctx: ScenarioContext, o: { fdLimit?: number }, fn: (t: TargetInstance) => Promise<T>): Promise<T> {
  if (ctx.url) {
    const url = ctx.url.replace(/\/+$/, '');
    return fn({ url, pid: undefined, handle: undefined, exitStatus: async () => ((await healthy(url)) ? null : { code: null, signal: 'unreachable' }) });
  }
  assertAvailable(ctx.target);
  const svc = ctx.target.service;
  if (!svc) throw new Error(`target "${ctx.target.name}" has no local service`);
  const workers = serverWorkersOf(ctx);
  let h: ServiceHandle;
  try {
    h = await startService(svc.name, { args: [...svc.args, ...(ctx.serviceArgs ?? [])], startTimeoutMs: startDeadlineMs(workers), ...(o.fdLimit ? { fdLimit: o.fdLimit } : {}) });
  } catch (err) {
    const how = `${workers > 1 ? `with --workers ${workers}` : 'as one process'}${o.fdLimit ? ` (open-file limit ${o.fdLimit})` : ''}`;
    throw new ReboundError('RR_ERR_SERVICE_START', `target start: ${ctx.target.name} ${how}: ${err instanceof Error ? err.message : String(err)}`, { cause: err, details: { phase: 'target start', target: ctx.target.name, workers } });
  }
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
export const fdUsage = (pid: number): { open: number | null; limit: number | null } => ({ open: openFds(pid) ?? null, limit: fdLimitOf(pid) ?? null });

/** Memory the kernel could give a new process now (MemAvailable), in MB; os.freemem() would miss reclaimable cache. */
export function availableMemMb(): number {
  // parseMeminfo reads a missing field as 0: a kernel without MemAvailable says nothing, like no /proc.
  const available = meminfo()?.memAvailable ?? 0;
  return available > 0 ? Math.round(available / 1024 / 1024) : Number.POSITIVE_INFINITY;
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

/** lib/figures.ts's median, the mean of an even count's middle two rounded to a whole number. */
export const median = (xs: readonly number[]): number | null => {
  const m = medianOf(xs);
  return m === null || xs.length % 2 ? m : Math.round(m);
};
