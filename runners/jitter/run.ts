import { Emitter } from '../../lib/emitter.ts';
import { randomSeed } from '../../lib/rng.ts';
import { sleep } from '../../lib/time.ts';
import { sourceAddress } from '../core/addresses.ts';
import { LatencyRecorder, summarize } from '../core/latency.ts';
import { DeliveryLedger } from '../core/ledger.ts';
import { startPublisher, type PublishPayload } from '../core/publisher.ts';
import { watchRunner } from '../core/runner-health.ts';
import { checkValidity } from '../core/validity.ts';
import { getTarget } from '../targets/index.ts';
import type { TargetClient } from '../targets/types.ts';
import type { JitterOptions } from './options.ts';
import type { JitterResult } from './result.ts';
import { planDrops, type ChaosEvent } from './timeline.ts';

export interface JitterEvents {
  phase: (name: 'connect' | 'publish' | 'settle' | 'report', detail: string) => void;
  progress: (p: { phase: string; connected: number; published: number; drops: number; received: number }) => void;
}

export interface JitterRun {
  events: Emitter<JitterEvents>;
  result: Promise<JitterResult>;
}

/**
 * The jitter engine: ramp clients, publish, drop every client on its seeded schedule, let the
 * protocol recover, then report from the ledger. It never prints; presentation subscribes to
 * `events`. `url` is the running target's base URL.
 */
export function runJitter(opts: JitterOptions, url: string): JitterRun {
  const events = new Emitter<JitterEvents>();
  const result = new Promise<JitterResult>((resolve, reject) => {
    // Start on the next turn so callers can attach listeners first.
    setImmediate(() => execute(opts, url, events).then(resolve, reject));
  });
  return { events, result };
}

async function execute(opts: JitterOptions, url: string, events: Emitter<JitterEvents>): Promise<JitterResult> {
  const target = getTarget(opts.target);
  const seed = opts.seed || randomSeed();
  const startedAt = new Date();
  const runId = `${target.name}-${startedAt.getTime().toString(36)}-${seed}`;
  const stream = opts.stream || `jitter-${runId}`;
  const health = watchRunner();
  const ledger = new DeliveryLedger(opts.clients, opts.msgs);
  const latency = new LatencyRecorder();
  const publishWindowMs = opts.msgs * opts.interval;
  const plan = planDrops(seed, opts.clients, opts.jitter, publishWindowMs);
  const timeline: ChaosEvent[] = [];
  const lastDrop: (ChaosEvent | undefined)[] = new Array(opts.clients);
  const counters = { reconnects: 0, resumes: 0, reconnectFailures: 0, historyRejected: 0, foreign: 0 };
  const disconnectReasons: Record<string, number> = {};
  let t0 = 0; // publish start, ms since epoch
  let stopping = false;

  const clients: TargetClient[] = [];
  for (let i = 0; i < opts.clients; i++) {
    const c = target.createClient({ index: i, url, stream, localAddress: sourceAddress(i), reconnectStrategy: opts.reconnectStrategy });
    c.on('message', (m) => {
      let p: Partial<PublishPayload>;
      try {
        p = JSON.parse(m.data) as Partial<PublishPayload>;
      } catch {
        p = {};
      }
      if (p.runId !== runId || typeof p.seq !== 'number' || typeof p.sentAt !== 'number') {
        counters.foreign++;
        return;
      }
      const lat = m.at - p.sentAt;
      if (ledger.record(i, p.seq, lat) === 'new') latency.recordMs(lat);
    });
    c.on('connected', ({ resumed, attempt }) => {
      if (attempt === 0) return;
      counters.reconnects++;
      if (resumed) counters.resumes++;
      const ev = lastDrop[i];
      if (ev && ev.reconnectedAtMs === undefined) {
        ev.reconnectedAtMs = Date.now() - t0;
        ev.resumed = resumed;
      }
    });
    c.on('disconnected', ({ reason }) => {
      disconnectReasons[reason] = (disconnectReasons[reason] ?? 0) + 1;
    });
    c.on('history', ({ ok }) => {
      if (!ok) counters.historyRejected++;
    });
    c.on('error', () => {});
    clients.push(c);
  }

  // 1. Ramp.
  events.emit('phase', 'connect', `${opts.clients} clients at ${opts.ramp}/s to ${target.name}`);
  const connected = new Uint8Array(opts.clients);
  let connectFailures = 0;
  const rampStart = Date.now();
  const connects: Promise<void>[] = [];
  for (let i = 0; i < opts.clients; i++) {
    const due = rampStart + (i * 1000) / opts.ramp;
    if (due > Date.now()) await sleep(due - Date.now());
    connects.push(
      withTimeout(clients[i]!.connect(), 20_000).then(
        () => void (connected[i] = 1),
        () => void connectFailures++,
      ),
    );
  }
  await Promise.all(connects);
  const connectedClients = opts.clients - connectFailures;
  await sleep(1000);

  // 2. Publish, with drops on the seeded schedule.
  events.emit('phase', 'publish', `${opts.msgs} messages every ${opts.interval} ms on ${stream}`);
  t0 = Date.now();
  let publishedNow = 0;
  const publisher = startPublisher({
    url,
    stream,
    runId,
    messages: opts.msgs,
    intervalMs: opts.interval,
    broadcastKey: opts.broadcastKey || undefined,
    onPublished: (_seq, ok) => void (ok && publishedNow++),
  });
  const offlineMs = target.reconnect === 'manual' ? Math.max(opts.jitterMs, target.offlineFloorMs) : opts.jitterMs;
  const chaosTasks: Promise<void>[] = [];
  for (let i = 0; i < opts.clients; i++) {
    if (!connected[i]) continue;
    chaosTasks.push(driveClient(i));
  }
  async function driveClient(i: number): Promise<void> {
    const c = clients[i]!;
    for (const at of plan[i]!) {
      await sleep(t0 + at - Date.now());
      if (stopping) return;
      const applied = c.drop();
      const ev: ChaosEvent = { client: i, kind: 'drop', atMs: Date.now() - t0, applied };
      timeline.push(ev);
      if (!applied) continue;
      lastDrop[i] = ev;
      await sleep(offlineMs);
      if (target.reconnect === 'manual') await reconnectManual(c);
    }
  }
  async function reconnectManual(c: TargetClient): Promise<void> {
    // Bounded retries: a target that refuses reconnects is a finding, not a reason to spin.
    for (let attempt = 0; attempt < 10 && !stopping; attempt++) {
      try {
        await withTimeout(c.reconnect(), 10_000);
        return;
      } catch {
        counters.reconnectFailures++;
        await sleep(1000);
      }
    }
  }
  const progress = setInterval(() => {
    events.emit('progress', { phase: 'publish', connected: connectedClients, published: publishedNow, drops: timeline.length, received: latency.count });
  }, 2000);
  progress.unref();
  const pub = await publisher.done;
  await Promise.all(chaosTasks);

  // 3. Settle: wait for replays, end early once every connected client has everything.
  events.emit('phase', 'settle', `up to ${opts.settle} ms`);
  const settleEnd = Date.now() + opts.settle;
  while (Date.now() < settleEnd) {
    if (latency.count >= connectedClients * pub.published && pub.published > 0) break;
    await sleep(250);
  }
  stopping = true;
  clearInterval(progress);
  for (const c of clients) c.close();
  const elapsedMs = Date.now() - rampStart;

  events.emit('phase', 'report', 'computing');
  const totals = ledger.totals();
  const enc = latency.encode();
  const lat = summarize(enc);
  const drops = timeline.filter((e) => e.applied);
  const recovery = drops.filter((e) => e.reconnectedAtMs !== undefined).map((e) => e.reconnectedAtMs! - e.atMs).sort((a, b) => a - b);
  const runner = health.stop();
  const partial: Omit<JitterResult, 'validity'> = {
    test: 'jitter',
    target: target.name,
    runId,
    seed,
    stream,
    startedAt: startedAt.toISOString(),
    params: { ...opts, seed },
    clients: opts.clients,
    connectedClients,
    connectFailures,
    totalMessages: opts.msgs,
    published: pub.published,
    publishFailures: pub.failed,
    publishFailureSamples: pub.failures,
    expectedDeliveries: totals.expectedDeliveries,
    receivedDeliveries: totals.receivedDeliveries,
    lostDeliveries: totals.lostDeliveries,
    deliveryRatePct: pct(totals.receivedDeliveries, totals.expectedDeliveries),
    deliveryRateOfConnectedPct: pct(totals.receivedDeliveries, connectedClients * opts.msgs),
    duplicates: totals.duplicates,
    outOfOrder: totals.outOfOrder,
    foreignMessages: counters.foreign + totals.foreign,
    perfectClients: totals.perfectClients,
    jitterEvents: drops.length,
    jitterSkipped: timeline.length - drops.length,
    reconnects: counters.reconnects,
    reconnectFailures: counters.reconnectFailures,
    csrResumes: target.replays ? counters.resumes : null,
    csrResumeRatePct: target.replays ? (counters.reconnects ? pct(counters.resumes, counters.reconnects) : 0) : null,
    historyRejected: counters.historyRejected,
    disconnectReasons,
    recoveryMs: { count: recovery.length, p50: quantile(recovery, 50), p95: quantile(recovery, 95), max: recovery.at(-1) ?? 0 },
    ...lat,
    latencyHistogram: enc,
    worstClient: ledger.worstClient() ?? null,
    runnerPeakRssMb: runner.runnerPeakRssMb,
    runner,
    elapsedMs,
    plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + 1000 + publishWindowMs + opts.settle,
    chaos: { plan: 'drop', offlineMs, timeline },
  };
  return { ...partial, validity: checkValidity(partial) };
}

const pct = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1e6) / 1e4 : 0);
/** Index-based percentile on a sorted array, as the benchmark computes it. */
const quantile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.floor(((sorted.length - 1) * p) / 100)]! : 0);

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });
}
