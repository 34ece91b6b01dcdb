import { readFileSync, readdirSync } from 'node:fs';

/**
 * The one target sampler: every runner that watches a target's memory, CPU or connections goes
 * through `startTargetSampler` (idle directly; jitter through the `watchTarget` series view).
 */

export interface TargetSample {
  /** Epoch ms. */
  at: number;
  /** The process tree's RSS from /proc when the pid is known, else what `/metrics` said; null if neither answered. */
  rssBytes: number | null;
  /** CPU time per wall time since the previous /proc sample, % of one core (can exceed 100 with workers); else `/metrics`. */
  cpuPct: number | null;
  /** Open connections per `/metrics` (a cluster's sum over its workers); null without a url or an answer. */
  connections: number | null;
}

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
export function processTree(pid: number): number[] {
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

/**
 * The processes of `pid`'s tree that run its program (a cluster primary and its workers), not
 * helpers it started briefly, such as the TypeScript loader's esbuild on a cold cache.
 */
export function runtimeProcesses(pid: number): number[] {
  const comm = (p: number) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const own = comm(pid);
  return own === undefined ? [] : processTree(pid).filter((p) => comm(p) === own);
}

/** CPU ticks and RSS of a process tree (a cluster primary's workers count as the target too); null when none of it exists. */
export function processTreeUsage(pid: number): { ticks: number; rssBytes: number } | null {
  let ticks = 0;
  let rssKb = 0;
  let seen = 0;
  for (const p of processTree(pid)) {
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
  return seen ? { ticks, rssBytes: rssKb * 1024 } : null;
}

export interface TargetSamplerOptions {
  /** Service base URL: its `/metrics` (connections, and RSS/CPU of the answering process) is read each sample. */
  url?: string;
  /** The target's pid when it runs on this machine: RSS and CPU then come from its whole process tree in /proc. */
  pid?: number;
  /** @default 1000 */
  everyMs?: number;
  /** @default 7200 */
  maxSamples?: number;
}

/**
 * Samples the target every `everyMs`: its `/metrics` when a url is given and, when the target
 * runs on this machine (`pid`), the RSS and CPU of its whole process tree from /proc, which is
 * what a cluster of workers really costs (and overrides what one process's `/metrics` says).
 */
export function startTargetSampler(opts: TargetSamplerOptions) {
  const samples: TargetSample[] = [];
  const maxSamples = Math.min(opts.maxSamples ?? 7200, MAX_SAMPLES);
  let last: { at: number; ticks: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let metricsOk = 0;
  const take = async (): Promise<TargetSample> => {
    // /proc first and stamped as read: CPU time per wall time must pair the tick count with its
    // own instant, not one taken before a /metrics answer that may take up to 2 s.
    const u = opts.pid ? processTreeUsage(opts.pid) : null;
    const at = Date.now();
    type Figures = { rssBytes?: number; cpuPct?: number; connections?: number };
    let metrics: Figures & { cluster?: Figures | null } = {};
    if (opts.url) {
      try {
        const r = await fetch(`${opts.url.replace(/\/+$/, '')}/metrics`, { signal: AbortSignal.timeout(2000) });
        if (r.ok) {
          metrics = (await r.json()) as typeof metrics;
          metricsOk++;
        }
      } catch {
        // A target too busy to answer is itself a finding: the sample says null.
      }
    }
    // In cluster mode (`--workers`) the answering worker's own figures are its share; `cluster` sums every process.
    const num = (k: keyof Figures) => (typeof metrics.cluster?.[k] === 'number' ? metrics.cluster[k] : typeof metrics[k] === 'number' ? metrics[k] : null);
    const s: TargetSample = { at, rssBytes: num('rssBytes'), cpuPct: typeof metrics.cpuPct === 'number' && !metrics.cluster ? metrics.cpuPct : null, connections: num('connections') };
    if (u) {
      if (u.rssBytes > 0) s.rssBytes = u.rssBytes;
      if (last && at > last.at) s.cpuPct = Math.round((((u.ticks - last.ticks) / TICKS_PER_SEC) * 1000 * 1000) / (at - last.at)) / 10;
      last = { at, ticks: u.ticks };
    }
    return s;
  };
  return {
    source: opts.pid ? ('proc-tree' as const) : ('metrics' as const),
    /** Median RSS of a few samples before the load: the baseline of bytes per connection. */
    async baseline(n = 3): Promise<number | null> {
      const v: number[] = [];
      for (let i = 0; i < n; i++) {
        const s = await take();
        if (s.rssBytes !== null) v.push(s.rssBytes);
        await new Promise((r) => setTimeout(r, 300));
      }
      return v.length ? v.sort((a, b) => a - b)[Math.floor(v.length / 2)]! : null;
    },
    start() {
      const tick = async () => {
        // Due every `everyMs` from this sample's start on the monotonic clock (Date.now()'s whole
        // ms would let a sample come a millisecond early).
        const due = performance.now() + (opts.everyMs ?? 1000);
        const s = await take();
        // stop() may come while a /metrics answer is awaited: that sample and any later are dropped.
        if (stopped) return;
        if (samples.length < maxSamples) samples.push(s);
        timer = setTimeout(() => void tick(), Math.max(0, Math.ceil(due - performance.now())));
        // A sampler never keeps the process alive on its own.
        timer.unref();
      };
      void tick();
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      return { samples, metricsAnswered: metricsOk };
    },
  };
}

/**
 * Sample a local target's RSS and CPU once per `intervalMs` from /proc, as a series. Only for
 * targets this runner started (it knows their pid) on Linux; otherwise `stop` returns null and
 * the report says the target was not sampled.
 */
export function watchTarget(pid: number, intervalMs = 1000) {
  const sampler = startTargetSampler({ pid, everyMs: intervalMs, maxSamples: MAX_SAMPLES });
  sampler.start();
  return {
    /** Stop sampling; times become seconds since `publishStart` (epoch ms). */
    stop(publishStart: number): TargetUsage | null {
      // The first sample has no CPU figure (no previous one to diff against): the series starts after it.
      const full = sampler.stop().samples.filter((s): s is TargetSample & { rssBytes: number; cpuPct: number } => s.rssBytes !== null && s.cpuPct !== null);
      if (full.length === 0) return null;
      return { tSec: full.map((s) => Math.round((s.at - publishStart) / 100) / 10), rssMb: full.map((s) => Math.round(s.rssBytes / 1024 / 102.4) / 10), cpuPct: full.map((s) => s.cpuPct) };
    },
  };
}
