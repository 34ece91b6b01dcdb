import { closeSync, openSync, readSync, readdirSync, readlinkSync } from 'node:fs';
import { processTree } from '../../services/common/process-info.ts';
import { isLoopbackUrl } from './addresses.ts';
import { fdsOf, procFile, procMem, statFields } from './proc.ts';

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
  /**
   * Whether `rssBytes` covers every process of the target: /proc read the whole tree, or
   * `/metrics` answered with its cluster's sum over every worker (or for a target that never
   * showed a cluster). False for an unanswered request and for one worker's own figure.
   */
  whole: boolean;
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

/**
 * The processes of `pid`'s tree that run its program (a cluster primary and its workers), not
 * helpers it started briefly, such as the TypeScript loader's esbuild on a cold cache.
 */
export function runtimeProcesses(pid: number): number[] {
  const comm = (p: number) => procFile(p, 'comm')?.trim();
  const own = comm(pid);
  return own === undefined ? [] : processTree(pid).filter((p) => comm(p) === own);
}

/**
 * CPU ticks (user + system, and user alone) and RSS of a process tree (a cluster primary's workers
 * count as the target too); null when none of it exists.
 */
export function processTreeUsage(pid: number): { ticks: number; userTicks: number; rssBytes: number } | null {
  let ticks = 0;
  let userTicks = 0;
  let rssBytes = 0;
  let seen = 0;
  for (const p of processTree(pid)) {
    const m = procMem(p);
    if (!m) continue; // exited between listing and reading
    ticks += m.cpuTicks;
    userTicks += m.userTicks;
    rssBytes += m.rss;
    seen++;
  }
  return seen ? { ticks, userTicks, rssBytes } : null;
}

/** Bytes of /proc/net/tcp read when looking for a listener (~150 per socket): a bound, read once before the load. */
const MAX_PROC_NET_BYTES = 32 * 1048576;
/** A process with more descriptors than this is not searched for the listener (a worker full of connections). */
const MAX_FDS_SEARCHED = 4096;
/** /metrics tries before the baseline to learn a local target's pid, when none answers (2 s each). */
const LOCATE_TRIES = 5;

function readBounded(file: string, max: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(Math.min(max, 1048576));
    const parts: Buffer[] = [];
    let total = 0;
    for (let n; total < max && (n = readSync(fd, buf, 0, Math.min(buf.length, max - total), null)) > 0; total += n) parts.push(Buffer.from(buf.subarray(0, n)));
    return Buffer.concat(parts).toString('latin1');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Inodes of the sockets whose local port is `port` (its listener and the connections it accepted),
 * per /proc/net/tcp and tcp6; `listening`: the listener's only (state 0A, LISTEN).
 */
function portInodes(port: number, listening = false): Set<string> {
  const out = new Set<string>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readBounded(f, MAX_PROC_NET_BYTES).split('\n')) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const c = line.trim().split(/\s+/);
      if (c[9] && c[9] !== '0' && parseInt(c[1]?.split(':')[1] ?? '', 16) === port && (!listening || c[3] === '0A')) out.add(c[9]);
    }
  }
  return out;
}

/** Processes looked at when searching /proc for a port's listener: a bound on one search. */
const MAX_PROCESSES_SEARCHED = 32_768;

/** The first process (ours to read) that holds one of `inodes`, searched over /proc; undefined when none does. */
function holderOf(inodes: Set<string>): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  for (const d of pids.slice(0, MAX_PROCESSES_SEARCHED)) if (holdsSocket(Number(d), inodes)) return Number(d);
  return undefined;
}

/** This process and its ancestors: a target found here would count the runner's own memory and clients. */
function selfAndAncestors(): Set<number> {
  const out = new Set<number>([process.pid]);
  for (let p = parentOf(process.pid), i = 0; p !== undefined && i < 64; p = parentOf(p), i++) out.add(p);
  return out;
}

function holdsSocket(pid: number, inodes: Set<string>): boolean {
  // Undefined when the process is not ours to read, or gone.
  const fds = fdsOf(pid);
  if (!fds || fds.length > MAX_FDS_SEARCHED) return false;
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m && inodes.has(m[1]!)) return true;
    } catch {
      // closed in between
    }
  }
  return false;
}

const parentOf = (pid: number): number | undefined => {
  const ppid = Number(statFields(pid)?.[1]);
  return Number.isInteger(ppid) && ppid > 1 ? ppid : undefined;
};

/** A process's command line as /proc holds it (NUL-separated), or undefined once it is gone. */
const commandOf = (pid: number): string | undefined => readBounded(`/proc/${pid}/cmdline`, 64 * 1024) || undefined;

/**
 * The local process tree that serves a loopback `url`, when this machine can see it. `hint` (the
 * pid a target's `/metrics` names: the process that answered) is believed only if that process
 * holds a socket on the URL's port (its listener, or the connection it just answered on); its
 * ancestors that hold one too, or that run the very same command line, are the same server, and
 * the highest is the tree's root. A node:cluster primary either holds the listener (shared with
 * its workers or handing them connections) or, when each worker binds the port itself with
 * SO_REUSEPORT (the replay server's uWS transport, services/uws), holds nothing on the port: its
 * workers are forks with its own command line. Without a hint (a server that answers no
 * `/metrics`), the process holding the port's listener is searched for in /proc, unless that is
 * this process or one of its ancestors. Undefined for a remote URL, a target in another pid
 * namespace or behind a proxy, or a hint that proves nothing.
 */
export function localListener(url: string, hint: unknown): number | undefined {
  if (process.platform !== 'linux' || !isLoopbackUrl(url)) return undefined;
  const u = new URL(url);
  const port = Number(u.port || (u.protocol === 'https:' || u.protocol === 'wss:' ? 443 : 80));
  let start: number | undefined;
  if (hint === undefined) {
    // No /metrics to name a pid (a user's own server): the process holding the port's listener.
    start = holderOf(portInodes(port, true));
    if (start === undefined) return undefined;
  } else if (typeof hint === 'number' && Number.isInteger(hint) && hint > 1) start = hint;
  else return undefined;
  const inodes = portInodes(port);
  if (!inodes.size || !holdsSocket(start, inodes)) return undefined;
  const command = commandOf(start);
  const sameServer = (p: number) => holdsSocket(p, inodes) || (command !== undefined && commandOf(p) === command);
  let root = start;
  for (let p = parentOf(start), i = 0; p !== undefined && i < 32 && sameServer(p); p = parentOf(p), i++) root = p;
  // Found by the port alone, a listener in this process or above it (a server inside the test or
  // tool that runs the runner) is not the target's own tree: its RSS would count the runner too.
  if (hint === undefined && selfAndAncestors().has(root)) return undefined;
  return root;
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
  // The target's process tree: given, or found from its /metrics before the baseline (locate()).
  let pid = opts.pid;
  let pidFrom: 'given' | 'listener' | null = pid ? 'given' : null;
  let clusterSeen = false;
  const maxSamples = Math.min(opts.maxSamples ?? 7200, MAX_SAMPLES);
  let last: { at: number; ticks: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let metricsOk = 0;
  let lastAnswer: { pid?: unknown } | undefined;
  const take = async (): Promise<TargetSample> => {
    // /proc first and stamped as read: CPU time per wall time must pair the tick count with its
    // own instant, not one taken before a /metrics answer that may take up to 2 s.
    const u = pid ? processTreeUsage(pid) : null;
    const at = Date.now();
    type Figures = { rssBytes?: number; cpuPct?: number; connections?: number };
    let metrics: Figures & { pid?: unknown; cluster?: (Figures & { workers?: number; perWorker?: unknown[] }) | null } = {};
    let answered = false;
    if (opts.url) {
      try {
        const r = await fetch(`${opts.url.replace(/\/+$/, '')}/metrics`, { signal: AbortSignal.timeout(2000) });
        if (r.ok) {
          const body: unknown = await r.json();
          if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
            metrics = body as typeof metrics;
            answered = true;
            metricsOk++;
          }
        }
      } catch {
        // A target too busy to answer is itself a finding: the sample says null.
      }
    }
    // In cluster mode (`--workers`) the answering worker's own figures are its share; `cluster` sums every process.
    const num = (k: keyof Figures) => (typeof metrics.cluster?.[k] === 'number' ? metrics.cluster[k] : typeof metrics[k] === 'number' ? metrics[k] : null);
    const c = metrics.cluster && typeof metrics.cluster === 'object' ? metrics.cluster : undefined;
    if (c) clusterSeen = true;
    // A cluster's sum is whole only with a report from every worker; without `cluster`, the
    // answering process is the whole target only if it never showed one (a single process).
    const whole = answered && (c ? typeof c.workers === 'number' && Array.isArray(c.perWorker) && c.perWorker.length >= c.workers : !clusterSeen);
    const s: TargetSample = { at, rssBytes: num('rssBytes'), cpuPct: typeof metrics.cpuPct === 'number' && !c ? metrics.cpuPct : null, connections: num('connections'), whole: whole && num('rssBytes') !== null };
    lastAnswer = answered ? metrics : lastAnswer;
    if (u) {
      s.whole = u.rssBytes > 0;
      if (u.rssBytes > 0) s.rssBytes = u.rssBytes;
      if (last && at > last.at) s.cpuPct = Math.round((((u.ticks - last.ticks) / TICKS_PER_SEC) * 1000 * 1000) / (at - last.at)) / 10;
      last = { at, ticks: u.ticks };
    }
    return s;
  };
  return {
    /** proc-tree: RSS/CPU of the target's whole process tree from /proc (the way the local fleet's cost table reads it); metrics: its /metrics. */
    get source(): 'proc-tree' | 'metrics' {
      return pid ? 'proc-tree' : 'metrics';
    },
    /** Where the pid came from: the caller (a target it started), the listener found from /metrics, or none. */
    get pidFrom() {
      return pidFrom;
    },
    /**
     * Median RSS of a few whole samples before the load: the baseline of bytes per connection.
     * Without a pid, the first answer's `pid` is checked for the URL's listener first: a target
     * on this machine is then read from /proc for the whole run, as a started one is.
     */
    async baseline(n = 3): Promise<number | null> {
      const v: number[] = [];
      if (!pid && opts.url) {
        // A loaded target may let the first tries pass their 2 s deadline (the 1M local fleet's
        // cluster answered 3-6 of ~528, and only at the start): ask again until one answers, a
        // few times. An answer that proves nothing (remote, proxied) ends the search at once.
        for (let i = 0; i < LOCATE_TRIES && !pid; i++) {
          await take();
          const found = localListener(opts.url, lastAnswer?.pid);
          if (found) {
            pid = found;
            pidFrom = 'listener';
          } else if (lastAnswer) break;
        }
      }
      for (let i = 0; i < n; i++) {
        const s = await take();
        if (s.rssBytes !== null && s.whole) v.push(s.rssBytes);
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
    /** Read another process from now on (the target was restarted as a new process); CPU restarts its diff there. */
    follow(next: number) {
      pid = next;
      pidFrom = 'given';
      last = undefined;
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
    /** Sample `pid` from now on: the target restarted as a new process. */
    follow: (pid: number) => sampler.follow(pid),
    /** Stop sampling; times become seconds since `publishStart` (epoch ms). */
    stop(publishStart: number): TargetUsage | null {
      // The first sample has no CPU figure (no previous one to diff against): the series starts after it.
      const full = sampler.stop().samples.filter((s): s is TargetSample & { rssBytes: number; cpuPct: number } => s.rssBytes !== null && s.cpuPct !== null);
      if (full.length === 0) return null;
      return { tSec: full.map((s) => Math.round((s.at - publishStart) / 100) / 10), rssMb: full.map((s) => Math.round(s.rssBytes / 1024 / 102.4) / 10), cpuPct: full.map((s) => s.cpuPct) };
    },
  };
}
