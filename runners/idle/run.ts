import { mergeChildReports } from '../../engine/targets/user-module.ts';
import { ReboundError } from '../../lib/errors.ts';
import { sleep } from '../../lib/time.ts';
import { openFileLimit } from '../../engine/measure/runner-limits.ts';
import type { WorkerTally } from './messages.ts';
import { IdleWorker } from './workers.ts';
import { workerCount, type IdleOptions } from './options.ts';
import { startTargetSampler, type TargetSample } from '../../engine/measure/target-usage.ts';
import { Emitter } from '../../lib/emitter.ts';
import type { EngineEvents } from '../../engine/session/events.ts';
import { logLines, type RunHooks } from '../../engine/session/present.ts';
import { addMaps } from '../../engine/session/results.ts';
import { checkIdleValidity } from './validity.ts';
import { getTarget, pickClient } from '../../engine/targets/index.ts';

/** The running counts over every worker, each second. */
export type IdleProgress = { phase: string; attempted: number; connected: number; subscribed: number; failed: number; open: number };
export type IdleHooks = Omit<RunHooks, 'progress'> & { progress?: (p: IdleProgress) => void };

const sum = (ws: WorkerTally[], k: keyof WorkerTally) => ws.reduce((a, w) => a + (w[k] as number), 0);

/** At most about `max` rows, evenly spaced, the last row kept (the end state matters most). */
const thin = <T,>(rows: T[], max: number): T[] => {
  const step = Math.ceil(rows.length / max) || 1;
  return rows.filter((_, i) => i % step === 0 || i === rows.length - 1);
};

/** Samples this close to the hold's end count as taken with every connection open (one sampling period and a half). */
const HELD_WINDOW_MS = 1500;

/**
 * The target's peak from whole samples only (one worker's own figure, or no answer, is not the
 * target's memory), up to the end of the hold; incomplete (with the reason) when the baseline or
 * every sample of the held connections missed part of the target, e.g. a cluster's /metrics that
 * stopped answering under load while /proc would have seen the whole tree.
 */
export function targetMemoryOf(samples: readonly TargetSample[], baselineRss: number | null, rampEnd: number, holdEnd: number, source: string) {
  const upToHoldEnd = samples.filter((s) => s.at <= holdEnd);
  const whole = upToHoldEnd.filter((s): s is TargetSample & { rssBytes: number } => s.whole && s.rssBytes !== null);
  const peakRss = whole.length ? Math.max(...whole.map((s) => s.rssBytes)) : null;
  const heldFrom = Math.min(rampEnd, holdEnd - HELD_WINDOW_MS);
  const lastWhole = whole.at(-1);
  let incomplete: string | null = null;
  if (samples.length === 0) incomplete = "the target's memory was not sampled";
  else if (baselineRss === null) incomplete = `no ${source} sample before the load saw every process of the target: no baseline`;
  else if (!lastWhole || lastWhole.at < heldFrom) {
    const unanswered = upToHoldEnd.filter((s) => s.rssBytes === null).length;
    const partial = upToHoldEnd.length - whole.length - unanswered;
    incomplete = `no ${source} sample saw every process of the target while the connections were held: ${whole.length} of ${upToHoldEnd.length} samples did (${unanswered} unanswered, ${partial} covering only some processes), the last ${lastWhole ? `${Math.round((heldFrom - lastWhole.at) / 100) / 10} s before the hold` : 'never'}; the peak misses what came after`;
  }
  return { peakRss, wholeSamples: whole.length, incomplete };
}

/**
 * The idle-capacity run: `clients` connections over worker processes at `ramp`/s (globally
 * interleaved), every one subscribed, held `hold` s while the target is sampled every second,
 * then closed. `url` is the target's base URL; `targetPid` its local process (for /proc figures).
 */
export async function runIdle(opts: IdleOptions, url: string, targetPid: number | undefined, hooks: IdleHooks = {}) {
  const started = Date.now();
  const n = workerCount(opts, openFileLimit());
  // The clients live in worker processes, not in a run session; the run still speaks in engine events.
  const events = new Emitter<EngineEvents>();
  hooks.events?.(events);
  logLines(events, hooks.log, 'idle');
  events.emit('phase', 'start', `${opts.clients} clients to ${opts.target} over ${n} worker process(es) at ${opts.ramp}/s, hold ${opts.hold} s`);
  const workers = Array.from({ length: n }, (_, i) => new IdleWorker(i, { fdLimit: opts.workerFdLimit }));
  const sampler = startTargetSampler({ url, ...(targetPid ? { pid: targetPid } : {}) });
  let aborted = false;
  const failed = () => workers.find((w) => w.error);
  const totals = (key: 'last' | 'ramped' | 'done') => workers.map((w) => w.tally[key] ?? w.tally.last).filter((t): t is WorkerTally => t !== undefined);
  // Per-second client counts for the report's clients-over-time chart; t0 moves to the ramp start.
  const clientSeries: number[][] = [];
  let t0 = started;
  const progressTimer = setInterval(() => {
    const t = totals('last');
    hooks.progress?.({ phase, attempted: sum(t, 'attempted'), connected: sum(t, 'connected'), subscribed: sum(t, 'subscribed'), failed: sum(t, 'failed'), open: sum(t, 'open') });
    if (phase !== 'start' && clientSeries.length < 3600) clientSeries.push([Date.now() - t0, sum(t, 'connected'), sum(t, 'subscribed'), sum(t, 'failed'), sum(t, 'open')]);
  }, 1000);
  let phase = 'start';
  try {
    for (const w of workers) if (!(await w.until(() => w.ready !== undefined, 30_000, hooks.signal))) break;
    if (failed()) throw new ReboundError('RR_ERR_RUNNER_WORKER', failed()!.error!);
    const baselineRss = await sampler.baseline();
    sampler.start();
    const startAt = Date.now() + 200;
    t0 = startAt;
    // Workers connect nobody before startAt: the chart's line starts from zero there.
    clientSeries.push([0, 0, 0, 0, 0]);
    phase = 'ramp';
    events.emit('phase', 'ramp', `${opts.clients} clients at ${opts.ramp}/s`);
    workers.forEach((w, i) => w.send({ type: 'start', target: opts.target, url, stream: opts.stream, first: i, stride: n, count: Math.floor(opts.clients / n) + (i < opts.clients % n ? 1 : 0), rampPerSec: opts.ramp, startAt, addresses: opts.addresses, connectTimeoutMs: opts.connectTimeoutMs, pingInterval: opts.pingInterval }));
    const rampBudget = (opts.clients * 1000) / opts.ramp + opts.connectTimeoutMs + 60_000;
    for (const w of workers) if (!(await w.until(() => w.tally.ramped !== undefined, rampBudget, hooks.signal))) break;
    if (failed()) throw new ReboundError('RR_ERR_RUNNER_WORKER', failed()!.error!);
    const rampEnd = Date.now();
    const ramped = totals('ramped');
    aborted = hooks.signal?.aborted ?? false;
    phase = 'hold';
    events.emit('phase', 'hold', `ramp done in ${rampEnd - startAt} ms: ${sum(ramped, 'subscribed')} subscribed, ${sum(ramped, 'failed')} failed; holding ${opts.hold} s`);
    const holdStart = Date.now();
    while (!aborted && Date.now() - holdStart < opts.hold * 1000) {
      await sleep(Math.min(500, holdStart + opts.hold * 1000 - Date.now()));
      if (hooks.signal?.aborted) aborted = true;
      if (failed()) throw new ReboundError('RR_ERR_RUNNER_WORKER', failed()!.error!);
    }
    const holdEnd = Date.now();
    const last = totals('last');
    clientSeries.push([holdEnd - t0, sum(last, 'connected'), sum(last, 'subscribed'), sum(last, 'failed'), sum(last, 'open')]);
    phase = 'close';
    events.emit('phase', 'close', 'closing every client');
    workers.forEach((w) => w.send({ type: 'stop' }));
    for (const w of workers) await w.until(() => w.tally.done !== undefined, 30_000);
    return idleResult({ opts, n, started, startAt, rampEnd, holdStart, holdEnd, aborted, baselineRss, sampler, done: totals('done'), fdLimit: workers[0]?.ready?.fdLimit ?? null, clientSeries });
  } finally {
    clearInterval(progressTimer);
    sampler.stop();
    for (const w of workers) w.kill();
  }
}

/** What one idle run measured, as its result: the workers' final tallies and the target's samples. */
function idleResult(x: { opts: IdleOptions; n: number; started: number; startAt: number; rampEnd: number; holdStart: number; holdEnd: number; aborted: boolean; baselineRss: number | null; sampler: ReturnType<typeof startTargetSampler>; done: WorkerTally[]; fdLimit: number | null; clientSeries: number[][] }) {
  const { opts, n, started, startAt, rampEnd, holdStart, holdEnd, aborted, baselineRss, sampler, done, fdLimit, clientSeries } = x;
  const { samples, metricsAnswered } = sampler.stop();
  const subscribed = sum(done, 'subscribed');
  const rssValues = samples.map((s) => s.rssBytes).filter((v): v is number => v !== null);
  const cpuValues = samples.map((s) => s.cpuPct).filter((v): v is number => v !== null);
  const memory = targetMemoryOf(samples, baselineRss, rampEnd, holdEnd, sampler.source);
  const peakRss = memory.peakRss;
  const bytesPerConnection = peakRss !== null && baselineRss !== null && subscribed > 0 ? Math.round((peakRss - baselineRss) / subscribed) : null;
  const runnerBaseline = sum(done, 'baselineRssBytes');
  const runnerPeak = sum(done, 'peakRssBytes');
  const lastSub = Math.max(0, ...done.map((t) => t.lastSubscribedAt));
  const result = {
    test: 'idle' as const,
    target: opts.target,
    /** The clients held: the target's lean client, or its full one when it declares no lean client (fewer per process, more runner memory each). */
    clientKind: pickClient(getTarget(opts.target), { prefer: 'lean' })!.kind,
    shardLabel: opts.shard ?? null,
    startedAt: new Date(started).toISOString(),
    params: { ...opts, url: undefined },
    clients: opts.clients,
    connected: sum(done, 'connected'),
    welcomed: sum(done, 'welcomed'),
    subscribed,
    failed: sum(done, 'failed'),
    /** fd_limit / port_exhaustion: the runner's own limits; timeout / target: the target's side. */
    failureCauses: addMaps(done.map((t) => t.failureCauses)),
    /** Distinct failure messages (at most 10) over all workers. */
    failureSamples: [...new Set(done.flatMap((t) => t.failureSamples))].slice(0, 10),
    openAtEndOfHold: sum(done, 'open'),
    disconnectedDuringHold: addMaps(done.map((t) => t.disconnects)),
    rampElapsedMs: rampEnd - startAt,
    /** From the first scheduled connect to the last subscription; null unless every client subscribed. */
    timeToAllSubscribedMs: subscribed === opts.clients && lastSub ? lastSub - startAt : null,
    holdElapsedMs: holdEnd - holdStart,
    totalElapsedMs: Date.now() - started,
    aborted,
    runner: {
      workers: n,
      fdLimitPerWorker: fdLimit,
      sourceAddresses: opts.addresses,
      rssBaselineBytes: runnerBaseline,
      rssPeakBytes: runnerPeak,
      /** (Σ worker peak RSS − Σ worker baseline RSS) / subscribed. */
      rssPerClientBytes: subscribed > 0 ? Math.round((runnerPeak - runnerBaseline) / subscribed) : null,
      loopLagP99Ms: Math.max(0, ...done.map((t) => t.loopLagP99Ms)),
      perWorker: done.map((t, i) => ({ worker: i, attempted: t.attempted, subscribed: t.subscribed, failed: t.failed, peakRssBytes: t.peakRssBytes, loopLagP99Ms: t.loopLagP99Ms })),
    },
    targetMetrics: {
      /** proc-tree: RSS/CPU of the local target's whole process tree (the pid given, or found from the URL's listener); metrics: its /metrics. */
      source: sampler.source,
      pidFrom: sampler.pidFrom,
      metricsAnswered,
      samples: samples.length,
      /** Samples whose RSS covered every process of the target. */
      wholeSamples: memory.wholeSamples,
      baselineRssBytes: baselineRss,
      /** The highest whole-target RSS up to the end of the hold (closing allocates; that is not a connection's cost). */
      peakRssBytes: peakRss,
      /** (peak RSS − baseline) / subscribed. */
      bytesPerConnection,
      /** False when no sample saw every process of the target while the connections were held: the peak understates it. */
      complete: memory.incomplete === null,
      incompleteReason: memory.incomplete,
      peakCpuPct: cpuValues.length ? Math.max(...cpuValues) : null,
      avgCpuPct: cpuValues.length ? Math.round((cpuValues.reduce((a, b) => a + b, 0) / cpuValues.length) * 10) / 10 : null,
      peakConnections: Math.max(0, ...samples.map((s) => s.connections ?? 0)),
      /** [ms since start, rssBytes, cpuPct, connections], at most ~300 points. */
      series: samples.filter((_, i) => i % Math.ceil(samples.length / 300 || 1) === 0).map((s) => [s.at - startAt, s.rssBytes, s.cpuPct, s.connections]),
    },
    clientSeries: thin(clientSeries, 300),
    ...childReportField(done),
    /** The benchmark's rebaseline names. */
    peakMemoryMb: peakRss !== null ? Math.round((peakRss / 1048576) * 10) / 10 : null,
    peakCpuPercent: cpuValues.length ? Math.max(...cpuValues) : null,
    ramKbPerConnected: bytesPerConnection !== null ? Math.round((bytesPerConnection / 1024) * 10) / 10 : null,
  };
  return { ...result, validity: checkIdleValidity({ ...result, runnerLoopLagP99Ms: result.runner.loopLagP99Ms, targetSamples: cpuValues.length + rssValues.length, targetMemoryIncomplete: memory.incomplete }) };
}

/** A target file's hook faults over every worker. */
function childReportField(done: readonly WorkerTally[]) {
  const targetModule = mergeChildReports(done.map((t) => t.targetModule));
  return targetModule ? { targetModule } : {};
}
