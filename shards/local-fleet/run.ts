import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cpus } from 'node:os';
import { ReboundError } from '../../lib/errors.ts';
import { parseOptions } from '../../lib/options.ts';
import { sleep } from '../../lib/time.ts';
import { stamp } from '../../engine/measure/result-files.ts';
import { COORD_OPTIONS } from '../coordinator/options.ts';
import { runMultiShard, testQuery, type MultiShardReport } from '../coordinator/run.ts';
import { isAlive } from '../../services/common/process-info.ts';
import { isCount } from '../merge/schema.ts';
import { readJson } from '../runner/jobs.ts';
import type { IdleProgress } from '../../runners/idle/run.ts';
import { costTable, checkPrediction } from './costs.ts';
import { buildBundles, ENTRIES, startProc, stopProc, type Proc } from './launch.ts';
import { shardsFor, type LocalFleetOptions } from './options.ts';
import { loadAverage, meminfo, slabCaches, slabGrowth, sockstat } from '../../engine/measure/proc.ts';
import { FleetSampler, type FleetSample } from './sampler.ts';

/** Why the fleet stopped where it did: always a name, never a bare "stopped". */
export type WallMode = 'NONE' | 'MEMORY_FLOOR' | 'FD_LIMIT' | 'PORTS' | 'MACHINE_BUSY' | 'PING_CPU' | 'CONNECT_RATE' | 'RUNNER_FAILED';

/** Mean CPU of other processes (% of one core) during the ramp and hold above which failed connects are the machine's, not a wall. */
export const MACHINE_BUSY_MEAN_PCT = 25;

/** A shard's idle job progress as polled: the idle runner's own, any field possibly missing. */
export type ShardProgress = Partial<IdleProgress>;

export const SERIES_COLUMNS = ['tSec', 'conns', 'subscribed', 'targetRss', 'runnerServicesRss', 'runnerWorkersRss', 'slab', 'tcpMemPages', 'memAvailable', 'targetCpuPct', 'runnerCpuPct'];

const thin = <T,>(rows: T[], max: number): T[] => {
  const step = Math.ceil(rows.length / max) || 1;
  return rows.filter((_, i) => i % step === 0 || i === rows.length - 1);
};

/** Name the wall from what the run recorded (the first that applies, most specific first). */
export function classifyWall(x: {
  floorTripped: boolean;
  failureCauses: Record<string, number>;
  failed: number;
  disconnectedDuringHold: Record<string, number>;
  shardErrors: string[];
  targetMaxFds: number;
  targetFdLimit: number | undefined;
  targetCpuPeak: number;
  runnerLoopLagP99Ms: number;
  n: number;
  subscribed: number;
  rampTotal: number;
  /** Pings per second the target sent at the most connections (connections / ping interval). */
  pingsPerSec: number;
  /** CPU of processes outside the fleet during the ramp and hold, % of one core: mean and peak. */
  otherCpu: { meanPct: number; peakPct: number };
}): { mode: WallMode; evidence: string } {
  const causes = JSON.stringify(x.failureCauses);
  if (x.floorTripped) return { mode: 'MEMORY_FLOOR', evidence: `MemAvailable fell below the floor at ${x.subscribed.toLocaleString('en-US')} subscribed; the ramp was aborted` };
  if ((x.failureCauses.fd_limit ?? 0) > 0) return { mode: 'FD_LIMIT', evidence: `${x.failureCauses.fd_limit} connects failed with EMFILE/ENFILE in a runner worker (${causes})` };
  if ((x.failureCauses.port_exhaustion ?? 0) > 0) return { mode: 'PORTS', evidence: `${x.failureCauses.port_exhaustion} connects failed with EADDRNOTAVAIL/EADDRINUSE (source ports) (${causes})` };
  if (x.failed > 0 && x.targetFdLimit && x.targetMaxFds >= x.targetFdLimit - 64) {
    return { mode: 'FD_LIMIT', evidence: `a target process held ${x.targetMaxFds} open files of its ${x.targetFdLimit} limit when ${x.failed} connects failed (${causes}): the target's per-process open-file limit` };
  }
  const dropped = Object.values(x.disconnectedDuringHold).reduce((a, b) => a + b, 0);
  // Another job took the CPU the connects needed: the run measured the machine, not the target.
  if ((x.failed > 0 || dropped > 0) && x.otherCpu.meanPct >= MACHINE_BUSY_MEAN_PCT) {
    return { mode: 'MACHINE_BUSY', evidence: `${x.failed} connects failed and ${dropped} held connections dropped while processes outside the fleet used a mean ${x.otherCpu.meanPct}% of one core (peak ${x.otherCpu.peakPct}%; 2 cores = 200%) during the ramp and hold (${causes}): not a wall of the target or the runners; run it on a quiet machine` };
  }
  if (dropped > 0) return { mode: 'PING_CPU', evidence: `${dropped} subscribed connections dropped while idle (${JSON.stringify(x.disconnectedDuringHold)}); target CPU peak ${x.targetCpuPeak}% of one core (2 cores = 200%), runner loop lag p99 ${x.runnerLoopLagP99Ms} ms: the ping traffic` };
  // Connects starved of CPU by the ping traffic: both cores busy (or a runner loop seconds late) with tens of thousands of pings a second.
  const cpuBound = x.targetCpuPeak >= 170 || x.runnerLoopLagP99Ms >= 1000;
  if (x.failed > 0 && cpuBound && x.pingsPerSec >= 20_000) return { mode: 'PING_CPU', evidence: `${x.failed} of ${x.n} connects failed or timed out (${causes}) while the target sent ~${x.pingsPerSec.toLocaleString('en-US')} pings/s: target CPU peak ${x.targetCpuPeak}% of one core (2 cores = 200%), runner loop lag p99 ${x.runnerLoopLagP99Ms} ms` };
  if (x.failed > 0) return { mode: 'CONNECT_RATE', evidence: `${x.failed} of ${x.n} connects failed or timed out during the ramp at ${x.rampTotal}/s (${causes}); target CPU peak ${x.targetCpuPeak}%, runner loop lag p99 ${x.runnerLoopLagP99Ms} ms` };
  if (x.shardErrors.length) return { mode: 'RUNNER_FAILED', evidence: x.shardErrors.join('; ') };
  return { mode: 'NONE', evidence: `all ${x.n.toLocaleString('en-US')} held with 0 failures` };
}

/** What the fleet reads of a shard's stored result (done, or partial after an abort). */
type StoredShardResult = { subscribed?: number; failed?: number; holdElapsedMs?: number; runner?: { loopLagP99Ms?: number; workers?: unknown; rssBaselineBytes?: unknown }; progress?: ShardProgress };

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * The local fleet: the target (replay with as many worker processes as the open-file limit needs,
 * or ws / socketio as one process), K runner services (own port, own results folder, one bearer
 * token), driven by the coordinator exactly as a remote fleet is (runMultiShard: same health
 * sweep, params check, merge and verdict), while every process, the kernel's socket memory and
 * free memory are sampled each second. The memory floor aborts the ramp: the runner services get
 * SIGTERM (their jobs abort, clients close, partial results are stored), then the coordinator
 * stops polling, then everything is stopped and checked gone.
 */
export async function runLocalFleet(o: LocalFleetOptions, log: (line: string) => void = () => {}) {
  const started = new Date();
  const k = shardsFor(o);
  const perShardN = Math.ceil(o.n / k);
  const rampPerShard = Math.max(1, Math.round(o.ramp / k));
  const isReplay = o.target === 'replay';
  if (!isReplay && o.pingInterval > 0) throw new ReboundError('RR_ERR_OPTION_INVALID', `pingInterval: only the replay server (AnyCable protocol) takes ?pi=; ${o.target} pings on its own schedule`, { details: { option: 'pingInterval' } });
  // Target worker processes the fd limit needs: each holds at most targetPerProcess connections.
  const targetWorkers = isReplay ? o.targetWorkers || Math.max(1, Math.ceil(o.n / o.targetPerProcess)) : 1;
  if (isReplay && targetWorkers > 64) throw new ReboundError('RR_ERR_OPTION_INVALID', `n ${o.n} needs ${targetWorkers} target worker processes at ${o.targetPerProcess} each; the replay server runs at most 64`, { details: { option: 'n' } });
  const maxPi = isReplay ? Math.max(30, o.pingInterval) : null;
  const out = resolve(o.out || join('results', `local-fleet-${o.target}-${o.n}-${stamp(started)}`));
  mkdirSync(out, { recursive: true });
  const entries = o.bundle ? buildBundles() : Object.fromEntries(Object.entries(ENTRIES).map(([kk, v]) => [kk, resolve(v)])) as Record<keyof typeof ENTRIES, string>;
  // One bearer token for every runner service of this fleet.
  const token = randomBytes(24).toString('hex');
  const loadBefore = loadAverage();
  const procs: Proc[] = [];
  let target: Proc | undefined;
  const runners: Proc[] = [];
  const inuseBefore = sockstat()?.tcpInuse ?? 0;
  const progress = new Map<string, ShardProgress>();
  const subscribedSeries = new Map<number, number>();
  const abort = new AbortController();
  let floorAt: FleetSample | undefined;
  let floorHandled: Promise<void> | undefined;
  let holdStart: number | undefined;
  let holdEnd: number | undefined;
  let slabBefore: Record<string, number> = {};
  let slabAtHold: { conns: number; caches: Record<string, number> } | undefined;

  const sampler = new FleetSampler(() => ({ target: target?.pid, runners: runners.map((r) => r.pid) }), {
    minFreeBytes: o.minFreeMib * 1048576,
    onFloor: (s) => {
      floorAt = s;
      log(`[fleet] MEMORY_FLOOR: MemAvailable ${Math.round(s.memAvailable / 1048576)} MiB < ${o.minFreeMib} MiB at ${s.conns} connections: aborting the ramp`);
      // The shards first (their jobs abort, clients close, partial results stored), then the coordinator stops watching.
      floorHandled = (async () => {
        await Promise.all(runners.map((r) => stopProc(r, 40_000)));
        abort.abort('MEMORY_FLOOR');
      })();
    },
  });
  let report: MultiShardReport | undefined;
  let samples: FleetSample[] = [];
  let baseline: FleetSample | undefined;
  try {
    const targetArgs = ['--port', '0', ...(isReplay && targetWorkers > 1 ? ['--workers', String(targetWorkers)] : []), ...(isReplay ? ['--max-ping-interval-sec', String(maxPi)] : [])];
    log(`[fleet] starting ${o.target} (${targetWorkers} process${targetWorkers > 1 ? 'es' : ''}${isReplay ? `, max ping interval ${maxPi} s` : ''})`);
    const targetFlags = o.targetSemiSpaceMib > 0 ? [`--max-semi-space-size=${o.targetSemiSpaceMib}`] : [];
    target = await startProc(o.target, entries[o.target], targetArgs, isReplay && targetWorkers > 1 ? { NODE_CLUSTER_SCHED_POLICY: o.sched } : {}, join(out, 'target.log'), 300_000, targetFlags);
    procs.push(target);
    const envKey = `TARGET_${o.target.toUpperCase()}_URL`;
    log(`[fleet] starting ${k} runner services`);
    // A few at a time: each loads its whole module graph, and 20 at once on two cores all time out together.
    for (let i = 0; i < k; i += 4) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(4, k - i) }, (_, j) => {
          const dir = join(out, 'shards', `s${i + j + 1}`);
          mkdirSync(dir, { recursive: true });
          return startProc(`runner s${i + j + 1}`, entries.runner, [], { PORT: '0', HOST: '127.0.0.1', RESULTS_DIR: dir, BENCH_RUNNER_TOKEN: token, [envKey]: target!.url, RUNNER_STOP_GRACE_MS: '30000', ...(o.bundle ? { REBOUND_IDLE_WORKER_ENTRY: entries.idleWorker } : {}) }, join(dir, 'runner.log'), 120_000);
        }),
      );
      runners.push(...batch);
      procs.push(...batch);
    }
    // Let start-up garbage settle before the baseline.
    await sleep(3000);
    slabBefore = slabCaches();
    baseline = sampler.markBaseline();
    if (!baseline) throw new ReboundError('RR_ERR_SERVICE_START', 'cannot read /proc/meminfo or /proc/net/sockstat: the local fleet needs Linux /proc');
    samples.push(baseline);
    sampler.start();
    const coordValues = { shards: runners.map((r) => r.url).join(','), token, test: 'idle', target: o.target, perShardN, pollMs: o.pollMs, timeoutSec: Math.ceil(perShardN / rampPerShard + o.hold + 600) };
    const co = parseOptions(COORD_OPTIONS, { values: coordValues, origin: 'CLI' });
    const params: Record<string, unknown> = { hold: o.hold, ramp: rampPerShard, stream: o.stream, addresses: o.addresses, connectTimeoutMs: o.connectTimeoutMs };
    if (o.pingInterval > 0) params.pingInterval = o.pingInterval;
    if (o.perWorker > 0) params.perWorker = o.perWorker;
    const query = testQuery('idle', params);
    log(`[fleet] coordinator: ${k} shards x ${perShardN} at ${rampPerShard}/s each (${rampPerShard * k}/s in all), hold ${o.hold} s${o.pingInterval ? `, ?pi=${o.pingInterval}` : ''}`);
    report = await runMultiShard(co, query, (line) => log(line), {
      signal: abort.signal,
      onProgress: (shard, status, p) => {
        const pr = (p ?? {}) as ShardProgress;
        progress.set(shard, pr);
        if (pr.phase === 'ramp' || num(pr.attempted) > 0) sampler.arm();
        const all = [...progress.values()];
        subscribedSeries.set(Date.now(), all.reduce((a, x) => a + num(x.subscribed), 0));
        if (holdStart === undefined && all.length === k && all.every((x) => x.phase === 'hold' || x.phase === 'close')) {
          holdStart = Date.now();
          // Which kernel objects the connections cost, read once with every connection open.
          slabAtHold = { conns: sampler.samples.at(-1)?.conns ?? 0, caches: slabCaches() };
        }
        if (holdEnd === undefined && (pr.phase === 'close' || (status !== 'running' && status !== 'queued'))) holdEnd = Date.now();
      },
    });
    if (floorHandled) await floorHandled;
    // A few seconds more: the curves show the connections closing.
    await sleep(3000);
  } finally {
    samples = [...samples, ...sampler.stop()];
    await Promise.all(runners.map((r) => stopProc(r, 40_000)));
    if (target) await stopProc(target, 30_000);
  }
  await sleep(2000);
  const leftPids = procs.filter((p) => isAlive(p.pid)).map((p) => p.pid);
  const inuseAfter = sockstat()?.tcpInuse ?? null;

  const r = report!;
  const m = r.merged as Record<string, unknown>;
  const base = baseline!;
  // Partial results: an aborted shard stored one in its own results folder.
  const perShard = r.perShard.map((s, i) => {
    // Each shard's own stored result (done or partial after an abort) from its results folder.
    const file = s.jobId ? join(out, 'shards', `s${i + 1}`, `${s.jobId}.json`) : undefined;
    // Unreadable: the last progress stands in.
    const stored = file ? readJson<StoredShardResult>(file) : undefined;
    const pr = progress.get(s.name);
    const subscribed = stored ? num(stored.subscribed ?? stored.progress?.subscribed) : pr ? num(pr.subscribed) : null;
    const failed = stored ? num(stored.failed ?? stored.progress?.failed) : pr ? num(pr.failed) : null;
    const w = stored?.runner;
    const workersOwn = w && isCount(w.workers) && isCount(w.rssBaselineBytes) && w.workers > 0 ? { rss: w.rssBaselineBytes, procs: w.workers } : null;
    return { name: s.name, status: s.status, subscribed, failed, partial: s.status !== 'done', holdElapsedMs: stored?.holdElapsedMs ?? null, loopLagP99Ms: stored?.runner?.loopLagP99Ms ?? null, workersOwn };
  });
  // The workers' baseline from their own readings, only when every shard's stored result has one.
  const owns = perShard.map((s) => s.workersOwn);
  const workersOwn = owns.every((x) => x !== null) ? owns.reduce((a, x) => ({ rss: a.rss + x!.rss, procs: a.procs + x!.procs }), { rss: 0, procs: 0 }) : undefined;
  const done = r.perShard.every((s) => s.status === 'done');
  const subscribed = done ? num(m.subscribed) : perShard.reduce((a, s) => a + num(s.subscribed), 0);
  const failed = done ? num(m.failed) : perShard.reduce((a, s) => a + num(s.failed), 0);
  const holdEndAt = holdEnd ?? floorAt?.at;
  const table = costTable(samples, base, o.milestones.split(',').map(Number).filter((x) => x > 0 && x < o.n), o.pingInterval || 3, holdEndAt, workersOwn);
  const rows = table.rows;
  const last = rows.at(-1);
  // The formula checked on this run: the row nearest half-way predicts the last one.
  const half = last ? rows.filter((x) => x !== last).find((x) => x.conns >= last.conns / 2) : undefined;
  let prediction: ReturnType<typeof checkPrediction> | null = null;
  if (last && last.conns > 0) {
    const fromSample = half ? undefined : [...samples].find((s) => s.conns >= last.conns / 2 && (!holdEndAt || s.at <= holdEndAt));
    const from = half ?? (fromSample ? costTable(samples.filter((x) => x.at <= fromSample.at), base, [fromSample.conns], o.pingInterval || 3, undefined, workersOwn).rows[0] : undefined);
    if (from) prediction = checkPrediction(table, from, last);
  }
  const maxConns = Math.max(0, ...samples.map((s) => s.conns));
  const targetMaxFds = Math.max(0, ...samples.map((s) => s.targetMaxFds ?? 0));
  const targetFdLimit = samples.find((s) => s.targetFdLimit)?.targetFdLimit;
  const during = samples.filter((s) => !holdEndAt || s.at <= holdEndAt);
  const targetCpuPeak = Math.max(0, ...during.map((s) => s.target.cpuPct));
  const runnerLag = Math.max(0, ...perShard.map((s) => num(s.loopLagP99Ms)));
  const others = during.slice(1).map((s) => s.otherCpuPct);
  const otherCpu = { meanPct: others.length ? Math.round((others.reduce((a, b) => a + b, 0) / others.length) * 10) / 10 : 0, peakPct: Math.max(0, ...others) };
  const wall = classifyWall({
    floorTripped: Boolean(floorAt),
    failureCauses: (m.failureCauses as Record<string, number>) ?? {},
    failed,
    disconnectedDuringHold: (m.disconnectedDuringHold as Record<string, number>) ?? {},
    shardErrors: r.perShard.filter((s) => s.status !== 'done').map((s) => `${s.name} ${s.status}: ${s.error ?? ''}`),
    targetMaxFds,
    targetFdLimit,
    targetCpuPeak,
    runnerLoopLagP99Ms: runnerLag,
    n: o.n,
    subscribed,
    rampTotal: rampPerShard * k,
    pingsPerSec: isReplay ? Math.round(maxConns / (o.pingInterval || 3)) : 0,
    otherCpu,
  });
  // The shards' subscribed as last polled at or before each sample (epoch ms keys, in order).
  const subAt = (at: number) => {
    let v: number | null = null;
    for (const [t, s] of subscribedSeries) if (t <= at) v = s;
    return v;
  };
  const ct0 = base.t;
  const series = thin(samples, 900).map((s) => [Math.round((s.t - ct0) / 100) / 10, s.conns, subAt(s.at), s.target.rss, s.runners.rss, s.runnerWorkers.rss, s.slab, s.tcpMemPages, s.memAvailable, s.target.cpuPct, s.runners.cpuPct + s.runnerWorkers.cpuPct]);
  // Each shard's own hold (its result's holdElapsedMs); the fleet held as long as the shortest.
  const holds = perShard.map((x) => x.holdElapsedMs).filter((v): v is number => typeof v === 'number');
  const heldSec = holds.length === perShard.length && holds.length ? Math.round(Math.min(...holds) / 100) / 10 : holdStart && holdEnd ? Math.round((holdEnd - holdStart) / 100) / 10 : 0;
  // A wall we named is exit 1 (an aborted ramp leaves the merge without any done shard: fatal there, but the cause is known).
  const exitCode: 0 | 1 | 2 = wall.mode === 'MEMORY_FLOOR' ? 1 : r.exitCode === 2 ? 2 : wall.mode === 'NONE' && r.exitCode === 0 ? 0 : 1;
  return {
    test: 'idle-local-fleet' as const,
    target: o.target,
    startedAt: started.toISOString(),
    endedAt: new Date().toISOString(),
    params: { ...o, shards: k, rampPerShard, rampTotal: rampPerShard * k, perShardN, targetWorkers, targetMaxPingIntervalSec: maxPi },
    /** The ping period every figure of this run used, and who decided it. */
    pingInterval: isReplay
      ? { askedSec: o.pingInterval, effectiveSec: o.pingInterval || 3, note: o.pingInterval ? `clients asked ?pi=${o.pingInterval}; the target ran with --max-ping-interval-sec ${maxPi}, so the clamp allowed it` : "no ?pi=: the replay server's default 3 s (AnyCable's default)" }
      : { askedSec: 0, effectiveSec: 0, note: `${o.target}: no AnyCable ping; the server's own heartbeat (Socket.IO: engine.io ping every 25 s by default; ws: none from the server)` },
    machine: { cpus: cpus().length, memTotalBytes: meminfo()?.memTotal ?? 0, loadBefore, loadAfter: loadAverage(), otherCpu },
    /** Exactly what `npm run bench:idle:multi` would have printed and written: same merge, same flags. */
    coordinator: r,
    /**
     * maxConnsKernel: most connections the kernel held at once, (TCP inuse growth) / 2; subscribed:
     * sum of the shards' subscribed (merged result or, after an abort, their last progress / partial results).
     */
    reached: { maxConnsKernel: maxConns, subscribed, failed, heldSec, perShard },
    wall,
    memoryFloor: { minFreeBytes: o.minFreeMib * 1048576, tripped: Boolean(floorAt), atSec: floorAt ? Math.round((floorAt.t - ct0) / 100) / 10 : null, memAvailableBytes: floorAt?.memAvailable ?? null, connsAtTrip: floorAt?.conns ?? null },
    costTable: table,
    /** /proc/slabinfo caches that grew most from the baseline to the start of the hold (every connection open). */
    slabGrowth: slabAtHold ? { conns: slabAtHold.conns, top: slabGrowth(slabBefore, slabAtHold.caches).map((x) => ({ ...x, perConn: slabAtHold!.conns ? Math.round(x.bytes / slabAtHold!.conns) : null })) } : null,
    prediction,
    /**
     * The target's bytes per connection two ways, side by side: the coordinator's merged figure
     * (the shards' samples) and the cost table's largest-N row (this fleet's /proc). Both read the
     * target's process tree from /proc when the shards find it (source proc-tree); differencePct is
     * (merged − cost table) / cost table.
     */
    targetMemory: targetMemoryCheck(m, last),
    /** After the stop: every process we started gone, and the kernel's TCP count back to its baseline. */
    closed: { allExited: leftPids.length === 0, leftPids, tcpInuseBefore: inuseBefore, tcpInuseAfter: inuseAfter },
    /** Per second: [t s, conns, subscribed (Σ shard progress), target RSS, runner services RSS, runner workers RSS, Slab, TCP mem pages, MemAvailable, target CPU %, runner CPU %]. */
    series: { columns: SERIES_COLUMNS, rows: series },
    files: { out } as Record<string, string>,
    exitCode,
  };
}

/** The fleet's result, as runLocalFleet builds it (fleet.json). */
export type LocalFleetResult = Awaited<ReturnType<typeof runLocalFleet>>;

function targetMemoryCheck(merged: Record<string, unknown>, last: { targetBytesPerConn: number; conns: number } | undefined) {
  const tm = (merged.targetMemory ?? {}) as { source?: unknown; complete?: unknown };
  const m = typeof merged.targetBytesPerConnection === 'number' ? merged.targetBytesPerConnection : null;
  const c = last?.targetBytesPerConn ?? null;
  return {
    merged: m,
    mergedSource: typeof tm.source === 'string' ? tm.source : null,
    mergedComplete: typeof tm.complete === 'boolean' ? tm.complete : null,
    costTable: c,
    costTableConns: last?.conns ?? null,
    differencePct: m !== null && c ? Math.round(((m - c) / c) * 1000) / 10 : null,
  };
}
