import { processTree } from '../../services/common/process-info.ts';
import { cpuBusyTicks, fdLimitOf, meminfo, openFds, procMem, sockstat } from '../../engine/measure/proc.ts';

/** One process group's memory (its processes' /proc figures summed) and CPU in one sample. */
export interface GroupMem extends Pick<NonNullable<ReturnType<typeof procMem>>, 'rss' | 'rssAnon'> {
  procs: number;
  /** CPU over the last interval, % of one core (100 = one core busy). */
  cpuPct: number;
}

/** The machine's figures a sample copies as /proc/meminfo and /proc/net/sockstat give them. */
type MachineFigures = Pick<NonNullable<ReturnType<typeof meminfo>>, 'memAvailable' | 'slab'> &
  Pick<NonNullable<ReturnType<typeof sockstat>>, 'tcpInuse' | 'tcpMemPages'>;

export interface FleetSample extends MachineFigures {
  /** ms since the sampler started. */
  t: number;
  at: number;
  /** Established loopback connections, from the kernel: (TCP inuse − inuse at the baseline) / 2. */
  conns: number;
  target: GroupMem;
  /** The runner services themselves (HTTP, job store, the idle run's parent). */
  runners: GroupMem;
  /** Their idle worker processes, which hold the client sockets. */
  runnerWorkers: GroupMem;
  /**
   * CPU the rest of the machine used over the last interval, % of one core: every process's
   * user+system time (/proc/stat) less the target's, the runners' and their workers'. Another job
   * on the box (a test suite, a build) shows here; the fleet's connects starve when it is high.
   */
  otherCpuPct: number;
  /** Highest open-fd count of any target process and its limit (sampled every fdEverySamples). */
  targetMaxFds?: number;
  targetFdLimit?: number;
}

const TICKS = 100; // USER_HZ on Linux

/**
 * Samples every `intervalMs` (1 s): each process's memory from /proc (the target's whole tree,
 * each runner service and its worker children), the kernel's TCP socket counts and memory
 * (/proc/net/sockstat) and the machine's Slab / MemAvailable (/proc/meminfo). `onFloor` fires
 * once, the first time MemAvailable is below `minFreeBytes` after `arm()` (the ramp began): the
 * caller stops the ramp.
 */
export class FleetSampler {
  readonly samples: FleetSample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly t0 = Date.now();
  private lastTicks = new Map<string, { ticks: number; at: number }>();
  private tripped = false;
  private armed = false;
  private inuse0: number | undefined;
  private n = 0;

  constructor(
    private readonly roots: () => { target: number | undefined; runners: number[] },
    private readonly opts: { intervalMs?: number; minFreeBytes: number; onFloor?: (s: FleetSample) => void; fdEverySamples?: number; maxSamples?: number },
  ) {}

  /** Take one sample now (the baseline before the ramp, and each tick). */
  sample(): FleetSample | undefined {
    const mi = meminfo();
    const ss = sockstat();
    if (!mi || !ss) return undefined;
    const r = this.roots();
    const targetPids = r.target ? processTree(r.target) : [];
    const runnerPids = r.runners;
    const workerPids = r.runners.flatMap((p) => processTree(p).slice(1));
    const now = Date.now();
    this.inuse0 ??= ss.tcpInuse;
    const s: FleetSample = {
      t: now - this.t0,
      at: now,
      memAvailable: mi.memAvailable,
      slab: mi.slab,
      tcpInuse: ss.tcpInuse,
      tcpMemPages: ss.tcpMemPages,
      conns: Math.max(0, Math.round((ss.tcpInuse - this.inuse0) / 2)),
      target: this.group('target', targetPids, now),
      runners: this.group('runners', runnerPids, now),
      runnerWorkers: this.group('runnerWorkers', workerPids, now),
      otherCpuPct: 0,
    };
    // This process (the coordinator and this sampler) is the fleet's too.
    const self = this.group('self', [process.pid], now).cpuPct;
    const busy = cpuBusyTicks();
    if (busy !== undefined) {
      const machinePct = this.cpuPct('machine', busy, now);
      s.otherCpuPct = Math.max(0, Math.round((machinePct - s.target.cpuPct - s.runners.cpuPct - s.runnerWorkers.cpuPct - self) * 10) / 10);
    }
    // A directory listing per target process, sparse and only for a target of one or two
    // processes (ws, socketio: where the per-process fd limit is the wall): listing /proc/<pid>/fd
    // creates a proc inode and dentry per descriptor (~1 KB of Slab per connection, seen in
    // /proc/slabinfo), which would be billed to the kernel term.
    if (targetPids.length && targetPids.length <= 2 && this.n % (this.opts.fdEverySamples ?? 10) === 0) {
      const fds = targetPids.map(openFds).filter((v): v is number => v !== undefined);
      if (fds.length) s.targetMaxFds = Math.max(...fds);
      s.targetFdLimit = fdLimitOf(targetPids[targetPids.length - 1]!) ?? fdLimitOf(targetPids[0]!);
    }
    this.n++;
    return s;
  }

  /** Reset the connection count's zero to the kernel's count now (call just before the ramp). */
  markBaseline(): FleetSample | undefined {
    this.inuse0 = undefined;
    return this.sample();
  }

  private group(name: string, pids: number[], now: number): GroupMem {
    const g: GroupMem = { procs: 0, rss: 0, rssAnon: 0, cpuPct: 0 };
    let ticks = 0;
    for (const pid of pids) {
      const m = procMem(pid);
      if (!m) continue;
      g.procs++;
      g.rss += m.rss;
      g.rssAnon += m.rssAnon;
      ticks += m.cpuTicks;
    }
    g.cpuPct = this.cpuPct(name, ticks, now);
    return g;
  }

  /** % of one core since this series' last reading (0 for its first); `ticks` is cumulative CPU time. */
  private cpuPct(series: string, ticks: number, now: number): number {
    const last = this.lastTicks.get(series);
    this.lastTicks.set(series, { ticks, at: now });
    // Processes that ended take their ticks with them: a drop is not negative CPU.
    return last && now > last.at ? Math.max(0, Math.round(((ticks - last.ticks) / TICKS / ((now - last.at) / 1000)) * 1000) / 10) : 0;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      const s = this.sample();
      if (!s) return;
      if (this.samples.length < (this.opts.maxSamples ?? 20_000)) this.samples.push(s);
      if (this.armed && !this.tripped && s.memAvailable < this.opts.minFreeBytes) {
        this.tripped = true;
        this.opts.onFloor?.(s);
      }
    }, this.opts.intervalMs ?? 1000);
  }

  /** The floor guards the ramp: armed when the first shard starts connecting. */
  arm(): void {
    this.armed = true;
  }

  stop(): FleetSample[] {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return this.samples;
  }
}
