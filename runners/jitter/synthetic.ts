import { planDrops, type ChaosEvent } from '../../chaos/plans/schedule.ts';
import { childRng } from '../../lib/rng.ts';
import type { DisruptionReport } from '../../engine/measure/disruptions.ts';
import { LatencyRecorder, summarize } from '../../engine/measure/latency.ts';
import { DeliveryLedger } from '../../engine/measure/ledger.ts';
import { SeriesRecorder } from '../../engine/measure/timeseries.ts';
import { checkValidity } from '../../engine/measure/validity.ts';
import { pct } from '../../engine/session/results.ts';
import { defaultsOf } from '../../lib/options.ts';
import { JITTER_OPTIONS } from './options.ts';
import type { JitterResult } from './result.ts';

export interface SyntheticRun {
  target: string;
  clients: number;
  msgs: number;
  intervalMs: number;
  jitterSec: number;
  /** Offline time per drop, ms. */
  offlineMs: number;
  /** Whether messages published while a client is offline are replayed (else lost). */
  replays: boolean;
  seed: number;
}

/**
 * A jitter result of any size, for the report's size and render benchmark: the same recorders
 * the engine uses (ledger, latency histogram, per-second series) fed with a simulated run on
 * the seeded drop plan, so the result has the shape and the volume of a real 10,000-client run
 * without needing 10,000 sockets. Never used for a figure about a target.
 */
export function syntheticJitterResult(o: SyntheticRun): JitterResult {
  const t0 = 1_000_000;
  const rampMs = Math.ceil((o.clients * 1000) / 200);
  const start = t0 - rampMs - 1000;
  const rng = childRng(o.seed, 1);
  const series = new SeriesRecorder(o.clients);
  const ledger = new DeliveryLedger(o.clients, o.msgs);
  const latency = new LatencyRecorder();
  series.start(start);
  for (let c = 0; c < o.clients; c++) series.connectedAt(c, start + (c * 1000) / 200);
  series.publishingStarted(t0);
  const plan = planDrops(o.seed, o.clients, o.jitterSec, o.msgs * o.intervalMs);
  const timeline: ChaosEvent[] = [];
  const recover: number[] = [];
  // Offline windows per client, in publish-relative ms.
  const offline = plan.map((times) => times.map((at) => [at, at + o.offlineMs + rng() * 500] as const));
  plan.forEach((times, c) =>
    times.forEach((at, k) => {
      const back = offline[c]![k]![1];
      timeline.push({ kind: 'drop', scope: 'client', target: c, plannedAtMs: at, atMs: at, durationMs: o.offlineMs, applied: true, reconnectedAtMs: Math.round(back), resumed: o.replays });
      series.disconnectedAt(c, t0 + at);
      series.connectedAt(c, t0 + back, { kind: 'drop', ms: back - at });
      recover.push(back - at);
    }),
  );
  for (let seq = 1; seq <= o.msgs; seq++) {
    const sent = (seq - 1) * o.intervalMs;
    series.sent(seq, t0 + sent);
    for (let c = 0; c < o.clients; c++) {
      const gap = offline[c]!.find(([a, b]) => sent >= a && sent < b);
      if (gap && !o.replays) continue;
      const lat = gap ? gap[1] - sent + 5 + rng() * 20 : 1 + rng() * 8;
      ledger.record(c, seq, lat);
      latency.recordMs(lat);
      series.arrival(t0 + sent + lat);
    }
  }
  const end = t0 + o.msgs * o.intervalMs + 3000;
  const totals = ledger.totals();
  const enc = latency.encode();
  const sorted = recover.sort((a, b) => a - b);
  const q = (p: number) => Math.round(sorted[Math.floor(((sorted.length - 1) * p) / 100)] ?? 0);
  const drop: DisruptionReport = {
    kind: 'drop',
    events: timeline.length,
    affectedClients: timeline.length,
    detectMs: { count: timeline.length, p50: 0, p95: 0, max: 0 },
    undetected: 0,
    recoverMs: { count: sorted.length, p50: q(50), p95: q(95), max: q(100) },
    unrecovered: 0,
    resumedPct: o.replays ? 100 : null,
    curve: Array.from({ length: 22 }, (_, i) => ({ tSec: i - 2, expected: 1000, delivered: o.replays || i < 2 || i > 3 ? 1000 : 400, deliveredPct: o.replays || i < 2 || i > 3 ? 100 : 40, latencyP50Ms: i === 2 && o.replays ? o.offlineMs : 5, latencyP95Ms: i === 2 && o.replays ? o.offlineMs + 400 : 9 })),
  };
  const params = { ...defaultsOf(JITTER_OPTIONS), target: o.target, clients: o.clients, msgs: o.msgs, interval: o.intervalMs, jitter: o.jitterSec, seed: o.seed };
  const partial: Omit<JitterResult, 'validity'> = {
    test: 'jitter',
    target: o.target,
    runId: `${o.target}-synthetic-${o.seed}`,
    seed: o.seed,
    stream: 'synthetic',
    startedAt: new Date(0).toISOString(),
    params,
    clients: o.clients,
    connectedClients: o.clients,
    connectFailures: 0,
    connectFailureCauses: {},
    runnerOpenFileLimit: 20_000,
    totalMessages: o.msgs,
    published: o.msgs,
    publishFailures: 0,
    publishFailureCauses: {},
    allowPublishFailures: false,
    lateConnects: 0,
    publishFailureSamples: [],
    ...totals,
    deliveryRatePct: pct(totals.receivedDeliveries, totals.expectedDeliveries),
    deliveryRateOfConnectedPct: pct(totals.receivedDeliveries, totals.expectedDeliveries),
    foreignMessages: 0,
    jitterEvents: timeline.length,
    jitterSkipped: 0,
    reconnects: timeline.length,
    reconnectFailures: 0,
    csrResumes: o.replays ? timeline.length : null,
    csrResumeRatePct: o.replays ? 100 : null,
    historyRejected: 0,
    disconnectReasons: { dropped: timeline.length },
    recoveryMs: drop.recoverMs,
    ...summarize(enc),
    latencyHistogram: enc,
    worstClient: ledger.worstClient() ?? null,
    runnerPeakRssMb: 0,
    runner: { runnerPeakRssMb: 0, runnerLoopLagMs: { p50: 0, p99: 0, max: 0 }, runnerStalledWindowsPct: 0 },
    elapsedMs: end - start,
    plannedMs: end - start,
    series: series.finish(end, ledger),
    // One sample per second, like watchTarget.
    targetResources: (() => {
      const n = Math.ceil((end - start) / 1000);
      const tSec = Array.from({ length: n }, (_, k) => (start - t0) / 1000 + k);
      return { tSec, rssMb: tSec.map((t) => 80 + Math.max(0, t) * 0.05 + rng() * 2), cpuPct: tSec.map(() => Math.round(rng() * 900) / 10) };
    })(),
    chaos: { plan: 'drop', groups: 0, proxyApi: null, offlineMs: o.offlineMs, disruptions: [drop], timeline },
  };
  return { ...partial, validity: checkValidity(partial) };
}
