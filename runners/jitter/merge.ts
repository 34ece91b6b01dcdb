import { addMaps, mergeLoss, pct, sum } from '../../engine/session/results.ts';
import type { LossReport } from '../../engine/measure/client-timelines.ts';
import type { ConditionResult, WeatherResult } from './weather.ts';
import { mergeLatency, summarize } from '../../engine/measure/latency.ts';
import { checkValidity } from '../../engine/measure/validity.ts';
import { mergeEpochReports } from '../../engine/measure/epoch-book.ts';
import type { DisruptionReport } from '../../engine/measure/disruptions.ts';
import { worseClient, type ClientTally } from '../../engine/measure/ledger.ts';
import { slices as contiguousSlices } from '../capacity/loader/plan.ts';
import type { JitterOptions } from './options.ts';
import type { JitterResult } from './result.ts';

/**
 * Merging jitter results of worker processes (or shards): counts and ledger totals are summed,
 * latency HdrHistograms merged exactly (mergeLatency); disruption spreads are not mergeable
 * exactly and are combined conservatively, with each worker's own figures kept in perWorker.
 */

/** Contiguous client slices (the capacity loaders' split); worker w's seed and stream derive from the run's, so one seed fixes every timeline. */
export function slices(o: JitterOptions, workers: number, seed: number, stream: string) {
  return contiguousSlices(o.clients, workers).map(({ first, count }, w) => ({ worker: w, first, clients: count, seed: ((seed + w * 7919) % 0x7fffffff) || 1, stream: `${stream}-w${w}` }));
}

export type WorkerSlice = ReturnType<typeof slices>[number];

function mergeSpread(xs: { count: number; p50: number; p95: number; max: number }[]) {
  const live = xs.filter((x) => x.count > 0);
  if (!live.length) return { count: 0, p50: 0, p95: 0, max: 0 };
  // Spreads are not mergeable exactly: count-weighted p50, worst p95 and max (per-worker exact values stay in perWorker).
  return { count: sum(live, (x) => x.count), p50: Math.round(sum(live, (x) => x.p50 * x.count) / sum(live, (x) => x.count)), p95: Math.max(...live.map((x) => x.p95)), max: Math.max(...live.map((x) => x.max)) };
}

/** Disruption reports of several workers or shards, kind by kind: counts summed, spreads combined conservatively, no curve. */
export function mergeDisruptions(parts: DisruptionReport[][]): DisruptionReport[] {
  const kinds = [...new Set(parts.flat().map((d) => d.kind))];
  return kinds.map((kind) => {
    const ds = parts.flat().filter((d) => d.kind === kind);
    const reconnectsResumed = ds.filter((d) => d.resumedPct !== null);
    return {
      kind,
      events: sum(ds, (d) => d.events),
      affectedClients: sum(ds, (d) => d.affectedClients),
      detectMs: mergeSpread(ds.map((d) => d.detectMs)),
      undetected: sum(ds, (d) => d.undetected),
      recoverMs: mergeSpread(ds.map((d) => d.recoverMs)),
      unrecovered: sum(ds, (d) => d.unrecovered),
      resumedPct: reconnectsResumed.length ? Math.round((sum(reconnectsResumed, (d) => (d.resumedPct ?? 0) * d.recoverMs.count) / Math.max(1, sum(reconnectsResumed, (d) => d.recoverMs.count))) * 10) / 10 : null,
      curve: [],
    };
  });
}

/** Network weather of several workers, condition by condition (each worker dealt its own slice by the same shares). */
export function mergeWeather(parts: readonly (WeatherResult | undefined)[]): WeatherResult | undefined {
  const ws = parts.filter((w): w is WeatherResult => w !== undefined);
  if (!ws.length) return undefined;
  const names = [...new Set(ws.flatMap((w) => w.conditions.map((c) => c.condition)))];
  return { spec: ws[0]!.spec, scale: ws[0]!.scale, conditions: names.map((n) => mergeCondition(ws.flatMap((w) => w.conditions.filter((c) => c.condition === n)))) };
}

function mergeCondition(cs: ConditionResult[]): ConditionResult {
  const enc = mergeLatency(cs.map((c) => c.latencyHistogram));
  const expected = sum(cs, (c) => c.expectedDeliveries);
  const received = sum(cs, (c) => c.receivedDeliveries);
  const unconfirmed = sum(cs, (c) => c.unconfirmedDeliveries);
  const losses = cs.every((c) => c.lossByCause && c.lateDeliveries) ? mergeLoss(cs as unknown as LossReport[]) : {};
  return {
    condition: cs[0]!.condition,
    share: cs[0]!.share,
    clients: sum(cs, (c) => c.clients),
    proxies: sum(cs, (c) => c.proxies),
    expectedDeliveries: expected,
    receivedDeliveries: received,
    lostDeliveries: sum(cs, (c) => c.lostDeliveries),
    unconfirmedDeliveries: unconfirmed,
    deliveryRatePct: pct(received - unconfirmed, expected),
    ...summarize(enc),
    latencyHistogram: enc,
    ...losses,
    disruptions: mergeDisruptions(cs.map((c) => c.disruptions)),
  };
}

/** Merge per-worker results: counts and the ledger totals are summed, latency histograms merged exactly. */
export function mergeJitterResults(o: JitterOptions, parts: { slice: WorkerSlice; result: JitterResult }[], seed: number, stream: string, runId: string): JitterResult & { workers: number; perWorker: unknown[] } {
  const rs = parts.map((p) => p.result);
  const enc = mergeLatency(rs.map((r) => r.latencyHistogram));
  const expected = sum(rs, (r) => r.expectedDeliveries);
  const received = sum(rs, (r) => r.receivedDeliveries);
  const unconfirmed = sum(rs, (r) => r.unconfirmedDeliveries ?? 0);
  const reconnects = sum(rs, (r) => r.reconnects);
  const replays = rs.some((r) => r.csrResumes !== null);
  const resumes = sum(rs, (r) => r.csrResumes ?? 0);
  let worst: ClientTally | null = null;
  for (const p of parts) {
    const w = p.result.worstClient;
    if (w && (!worst || worseClient(worst, w))) worst = { ...w, index: w.index + p.slice.first };
  }
  const runners = rs.map((r) => r.runner);
  const runner = {
    runnerPeakRssMb: Math.round(sum(runners, (r) => r.runnerPeakRssMb) * 10) / 10,
    runnerLoopLagMs: { p50: Math.max(...runners.map((r) => r.runnerLoopLagMs.p50)), p99: Math.max(...runners.map((r) => r.runnerLoopLagMs.p99)), max: Math.max(...runners.map((r) => r.runnerLoopLagMs.max)) },
    runnerStalledWindowsPct: Math.max(...runners.map((r) => r.runnerStalledWindowsPct)),
  };
  const first = rs[0]!;
  const merged = {
    test: 'jitter' as const,
    target: first.target,
    runId,
    seed,
    stream,
    startedAt: rs.map((r) => r.startedAt).sort()[0]!,
    params: { ...o, seed },
    clients: sum(rs, (r) => r.clients),
    connectedClients: sum(rs, (r) => r.connectedClients),
    connectFailures: sum(rs, (r) => r.connectFailures),
    connectFailureCauses: addMaps(rs.map((r) => r.connectFailureCauses)),
    runnerOpenFileLimit: first.runnerOpenFileLimit,
    totalMessages: o.msgs,
    published: Math.min(...rs.map((r) => r.published)),
    publishFailures: sum(rs, (r) => r.publishFailures),
    publishFailureCauses: addMaps(rs.map((r) => r.publishFailureCauses)),
    allowPublishFailures: o.allowPublishFailures,
    publishFailureSamples: rs.flatMap((r) => r.publishFailureSamples).slice(0, 20),
    expectedDeliveries: expected,
    receivedDeliveries: received,
    lostDeliveries: sum(rs, (r) => r.lostDeliveries),
    unacceptedDeliveries: sum(rs, (r) => r.unacceptedDeliveries),
    unconfirmedDeliveries: unconfirmed,
    lateConnects: sum(rs, (r) => r.lateConnects),
    deliveryRatePct: pct(received - unconfirmed, expected),
    // Each worker publishes on its own stream: its clients expect only what its publisher got accepted.
    deliveryRateOfConnectedPct: pct(received - unconfirmed, sum(rs, (r) => r.connectedClients * r.published)),
    duplicates: sum(rs, (r) => r.duplicates),
    outOfOrder: sum(rs, (r) => r.outOfOrder),
    foreignMessages: sum(rs, (r) => r.foreignMessages),
    perfectClients: sum(rs, (r) => r.perfectClients),
    jitterEvents: sum(rs, (r) => r.jitterEvents),
    jitterSkipped: sum(rs, (r) => r.jitterSkipped),
    reconnects,
    reconnectFailures: sum(rs, (r) => r.reconnectFailures),
    csrResumes: replays ? resumes : null,
    csrResumeRatePct: replays && reconnects ? pct(resumes, reconnects) : null,
    historyRejected: sum(rs, (r) => r.historyRejected),
    brokerEpoch: mergeEpochReports(rs.map((r) => r.brokerEpoch)),
    disconnectReasons: addMaps(rs.map((r) => r.disconnectReasons)),
    recoveryMs: mergeSpread(rs.map((r) => r.recoveryMs)),
    ...summarize(enc),
    latencyHistogram: enc,
    worstClient: worst,
    runnerPeakRssMb: runner.runnerPeakRssMb,
    runner,
    elapsedMs: Math.max(...rs.map((r) => r.elapsedMs)),
    plannedMs: Math.max(...rs.map((r) => r.plannedMs)),
    chaos: {
      ...first.chaos,
      disruptions: mergeDisruptions(rs.map((r) => r.chaos.disruptions)),
      timeline: parts.flatMap((p) => p.result.chaos.timeline.map((e) => (e.scope === 'client' ? { ...e, target: e.target + p.slice.first } : e))).sort((a, b) => a.atMs - b.atMs),
    },
    // Target-wide figures, sampled once (by worker 0); the per-second series stay per worker.
    ...(first.targetResources ? { targetResources: first.targetResources } : {}),
    ...(rs.some((r) => r.aborted) ? { aborted: true } : {}),
    ...(rs.some((r) => r.disruptionWindow) ? { disruptionWindow: { planned: sum(rs, (r) => r.disruptionWindow?.planned ?? 0), applied: sum(rs, (r) => r.disruptionWindow?.applied ?? 0), windowMs: Math.max(...rs.map((r) => r.disruptionWindow?.windowMs ?? 0)) } } : {}),
    lossByCause: addMaps(rs.map((r) => r.lossByCause ?? {})),
    resumeOutcomes: addMaps(rs.map((r) => r.resumeOutcomes ?? {})),
    replayedDeliveries: sum(rs, (r) => r.replayedDeliveries ?? 0),
    offlineAtEnd: { clients: sum(rs, (r) => r.offlineAtEnd?.clients ?? 0), lostDeliveries: sum(rs, (r) => r.offlineAtEnd?.lostDeliveries ?? 0) },
    ...(rs.some((r) => r.weather) ? { weather: mergeWeather(rs.map((r) => r.weather)) } : {}),
    workers: parts.length,
    perWorker: parts.map((p) => ({ ...p.slice, connectedClients: p.result.connectedClients, published: p.result.published, deliveryRatePct: p.result.deliveryRatePct, lostDeliveries: p.result.lostDeliveries, latencyRawMs: p.result.latencyRawMs, recoveryMs: p.result.recoveryMs, runner: p.result.runner, disruptions: p.result.chaos.disruptions })),
  };
  return { ...merged, validity: checkValidity(merged) };
}

