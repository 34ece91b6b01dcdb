import type { FleetSample, GroupMem } from './sampler.ts';

/**
 * The cost table: what one idle connection costs on this box, split by who pays, with the fixed
 * per-process baselines apart, so that the memory of N connections is a formula with measured
 * terms:
 *
 *   total(N) = baseline(target) + baseline(runner services) + baseline(runner workers)
 *              + N × (target B/conn + runner B/client + kernel B/conn)
 *
 * - user-space terms are RSS growth over the group's baseline, divided by the connections the
 *   kernel counts at that moment ((TCP inuse − inuse at the baseline) / 2);
 * - the kernel term is the growth of Slab (tcp_sock, socket inodes, files, epoll items, dentries)
 *   plus the TCP buffer pages of /proc/net/sockstat. Both ends of a loopback connection live on
 *   this box and hold the same objects (one TCP socket, inode, file and epoll item each), so the
 *   measured sum is attributed half to the target's end and half to the runner's;
 * - baselines: the target's process tree in the last sample before the first connection (the
 *   instant the shards read theirs, so the merged figure and this table share it: a target gives
 *   start-up memory back between its start and the jobs, 143 MB for the 16-process uWS replay
 *   tree at 1M, which read from the fleet's first sample made the early rows negative and the
 *   two figures 17.9% apart); the runner services at their lowest
 *   from the moment every worker had started to the hold's end (a service grows by tens of MB when
 *   its job starts: that is its fixed cost, not a client's, and part of it is garbage a later GC
 *   gives back: see servicesFloor); the runner workers' own RSS as each measured
 *   it once loaded, before its first connect (the shards' `runner.rssBaselineBytes`), because the
 *   first /proc sample with every worker alive catches them half-loaded (21 MiB of a loaded
 *   worker's ~45 MiB at 1M), which booked ~1.4 KB of start-up per client.
 *
 * RSS counts shared file pages (node's own text) once per process; `baselineAnonBytes` is the
 * private part, the physical memory a further process really costs.
 */

const userTotal = (s: FleetSample) => s.target.rss + s.runners.rss + s.runnerWorkers.rss;
const kernelGrowth = (s: FleetSample, b: FleetSample) => s.slab - b.slab + (s.tcpMemPages - b.tcpMemPages) * 4096;

/**
 * The runner workers' baseline: the first sample in which all of them run (their count at its
 * maximum) — they start when the job does, after the fleet's own baseline — minus what the
 * connections open at that moment already cost at the final row's rate (a second's worth at most).
 */
export function workerBaseline(samples: readonly FleetSample[]): FleetSample | undefined {
  const most = Math.max(0, ...samples.map((s) => s.runnerWorkers.procs));
  return most > 0 ? samples.find((s) => s.runnerWorkers.procs === most) : undefined;
}

/**
 * The runner services' fixed cost: their lowest RSS from the moment every worker runs to the end
 * of the hold. A service holds no client socket (its workers do), so what it has above that floor
 * at a sample is garbage of its job's start-up awaiting a GC: read at the first sample with every
 * worker alive, 25-50 MB of it made the 2,000-connection row's runner term negative (CI: -11,638
 * B/client, 219 against 168 MiB of services baseline on a quiet run).
 */
export function servicesFloor(during: readonly FleetSample[], w: FleetSample | undefined): FleetSample | undefined {
  if (!w) return undefined;
  const floor = during.filter((s) => s.at >= w.at && s.runners.procs === w.runners.procs).reduce((lo, s) => (s.runners.rss < lo.runners.rss ? s : lo), w);
  return floor === w ? w : { ...w, runners: floor.runners };
}

/** The runner workers' RSS as they reported it once loaded and before connecting, summed over every worker of every shard: it stands in for their group's. */
export type WorkersOwnBaseline = Pick<GroupMem, 'rss' | 'procs'>;

/**
 * The target's baseline sample: the last one before the kernel counts the first connections
 * (more than 0.1% of the most, and more than the services' own few HTTP connections), or the
 * fleet's baseline when the ramp never showed.
 */
export function targetBaseline(samples: readonly FleetSample[], fleetBaseline: FleetSample): FleetSample {
  const most = Math.max(0, ...samples.map((s) => s.conns));
  const first = samples.findIndex((s) => s.conns > Math.max(200, most * 0.001));
  return first > 0 ? samples[first - 1]! : fleetBaseline;
}

export function baselinesOf(b: FleetSample, w: FleetSample | undefined, own?: WorkersOwnBaseline, tb: FleetSample = b) {
  const proc = w?.runnerWorkers ?? { rss: 0, rssAnon: 0, procs: 0 };
  // Their own reading, when every worker /proc saw reported one (a partial shard result may not carry it).
  const useOwn = own !== undefined && own.procs > 0 && own.procs >= proc.procs;
  const wr = useOwn ? { rss: own.rss, rssAnon: proc.rssAnon, procs: own.procs } : proc;
  return {
    targetRssBytes: tb.target.rss,
    targetAnonBytes: tb.target.rssAnon,
    targetProcs: tb.target.procs,
    runnerServicesRssBytes: (w ?? b).runners.rss,
    runnerServicesAnonBytes: (w ?? b).runners.rssAnon,
    runnerServices: b.runners.procs,
    runnerWorkersRssBytes: wr.rss,
    /** /proc's, at the first sample with every worker alive (the workers report RSS, not its private part). */
    runnerWorkersAnonBytes: wr.rssAnon,
    runnerWorkers: wr.procs,
    /** Where the workers' RSS baseline came from: their own reading once loaded, or the first /proc sample with all of them alive. */
    runnerWorkersBaselineFrom: useOwn ? ('workers' as const) : ('proc' as const),
    /** Per process (RSS): target worker, runner service, runner worker. */
    perTargetProcBytes: tb.target.procs ? Math.round(tb.target.rss / tb.target.procs) : 0,
    perRunnerServiceBytes: b.runners.procs ? Math.round((w ?? b).runners.rss / b.runners.procs) : 0,
    perRunnerWorkerBytes: wr.procs ? Math.round(wr.rss / wr.procs) : 0,
    totalRssBytes: tb.target.rss + (w ?? b).runners.rss + wr.rss,
    totalAnonBytes: tb.target.rssAnon + (w ?? b).runners.rssAnon + wr.rssAnon,
    /** At the baseline sample: the machine's starting point, not part of the formula. */
    kernel: { slabBytes: b.slab, tcpMemPages: b.tcpMemPages, tcpInuse: b.tcpInuse },
  };
}

export type Baselines = ReturnType<typeof baselinesOf>;

/** One row from one sample: every term is (growth since its baseline) / connections at that sample. */
export function costRow(milestone: number | 'max', s: FleetSample, b: FleetSample, w: FleetSample | undefined, pingIntervalSec: number, own?: WorkersOwnBaseline, tb: FleetSample = b) {
  const n = Math.max(1, s.conns);
  const base = baselinesOf(b, w, own, tb);
  const target = Math.round((s.target.rss - tb.target.rss) / n);
  // Both runner groups from the moment every worker runs: a service's own job set-up (tens of MB
  // when a job starts) is its baseline, not a per-client cost.
  const wb = w ?? b;
  const runner = Math.round((s.runners.rss - wb.runners.rss + s.runnerWorkers.rss - base.runnerWorkersRssBytes) / n);
  const kernel = Math.round(kernelGrowth(s, b) / n);
  const total = target + runner + kernel;
  return {
    /** The milestone asked (100000, 250000, ... or the largest N reached). */
    milestone,
    /** Connections the kernel counted at the sample used. */
    conns: s.conns,
    /** Seconds since the sampler started. */
    tSec: Math.round(s.t / 100) / 10,
    targetBytesPerConn: target,
    runnerBytesPerConn: runner,
    kernelBytesPerConn: kernel,
    /** Half of kernelBytesPerConn each: the target's end and the runner's end of the loopback pair. */
    kernelTargetEnd: Math.round(kernel / 2),
    kernelRunnerEnd: kernel - Math.round(kernel / 2),
    /** target + runner + kernel per connection. */
    totalBytesPerConn: total,
    /** What the formula says N connections take, with this row's terms, and what was measured. */
    predictedTotalBytes: predictTotal(base, { target, runner, kernel }, s.conns),
    measuredTotalBytes: userTotal(s) + kernelGrowth(s, b),
    /** MemTotal − MemAvailable growth since the baseline (the whole machine: other jobs included). */
    machineUsedGrowthBytes: b.memAvailable - s.memAvailable,
    /** Ping interval the clients asked for (s), and what the target ran at. */
    pingIntervalSec,
  };
}

export type CostRow = ReturnType<typeof costRow>;

export function predictTotal(base: Baselines, perConn: { target: number; runner: number; kernel: number }, n: number): number {
  return base.totalRssBytes + n * (perConn.target + perConn.runner + perConn.kernel);
}

/**
 * Rows at each milestone the run passed (the first sample at or past it, during the ramp) and at
 * the largest N reached (the last sample of the hold, when every connection had settled).
 */
export function costTable(samples: readonly FleetSample[], baseline: FleetSample, milestones: readonly number[], pingIntervalSec: number, holdEndAt?: number, own?: WorkersOwnBaseline) {
  const during = holdEndAt ? samples.filter((s) => s.at <= holdEndAt) : samples;
  const w = servicesFloor(during, workerBaseline(samples));
  const tb = targetBaseline(samples, baseline);
  const rows: CostRow[] = [];
  for (const m of milestones) {
    const s = samples.find((x) => x.conns >= m);
    if (s) rows.push(costRow(m, s, baseline, w, pingIntervalSec, own, tb));
  }
  const most = Math.max(0, ...during.map((s) => s.conns));
  // The last sample at the plateau (within 0.1% of the most): memory settled, nothing closed yet.
  const plateau = [...during].reverse().find((s) => s.conns >= most * 0.999 && s.conns > 0);
  if (plateau) rows.push(costRow('max', plateau, baseline, w, pingIntervalSec, own, tb));
  return {
    baselines: baselinesOf(baseline, w, own, tb),
    rows,
    formula: 'total(N) = baseline(target tree) + baseline(runner services) + baseline(runner workers) + N x (target B/conn + runner B/client + kernel B/conn)',
    kernelSplit: 'kernel B/conn = (growth of /proc/meminfo Slab + growth of /proc/net/sockstat TCP mem pages x 4096) / connections; both ends of a loopback connection are on this box and hold the same objects, so it is attributed half to the target end and half to the runner end',
  };
}

export type CostTable = ReturnType<typeof costTable>;

/**
 * The formula checked against a measurement: the terms measured at `from` (a row part-way up the
 * ramp) predict the total at `to` (a later row); returns the error as a fraction of the measured
 * total, and the error of the connection-dependent part alone.
 */
export function checkPrediction(table: CostTable, from: CostRow, to: CostRow): { predicted: number; measured: number; error: number; variablePredicted: number; variableMeasured: number; variableError: number } {
  const predicted = predictTotal(table.baselines, { target: from.targetBytesPerConn, runner: from.runnerBytesPerConn, kernel: from.kernelBytesPerConn }, to.conns);
  const measured = to.measuredTotalBytes;
  const variablePredicted = predicted - table.baselines.totalRssBytes;
  const variableMeasured = measured - table.baselines.totalRssBytes;
  return {
    predicted,
    measured,
    error: Math.abs(predicted - measured) / Math.max(1, measured),
    variablePredicted,
    variableMeasured,
    variableError: Math.abs(variablePredicted - variableMeasured) / Math.max(1, Math.abs(variableMeasured)),
  };
}
