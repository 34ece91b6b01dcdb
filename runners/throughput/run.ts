import { randomSeed } from '../../lib/rng.ts';
import { sleep } from '../../lib/time.ts';
import { sourceAddress } from '../core/addresses.ts';
import { ConnectionBook, rampConnect } from '../core/connections.ts';
import { LatencyRecorder, summarize } from '../core/latency.ts';
import { DeliveryLedger } from '../core/ledger.ts';
import { startPublisher, type PublisherResult } from '../core/publisher.ts';
import { readPayload } from '../targets/payload.ts';
import { watchRunner } from '../core/runner-health.ts';
import { openFileLimit } from '../core/runner-limits.ts';
import { checkValidity } from '../core/validity.ts';
import { getTarget, type TargetClient } from '../targets/index.ts';
import type { ThroughputOptions } from './options.ts';
import type { ThroughputResult } from './result.ts';

export interface ThroughputHooks {
  signal?: AbortSignal;
  progress?: (p: { phase: string; connected: number; published: number; received: number }) => void;
  log?: (line: string) => void;
}

const pct = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1e6) / 1e4 : 0);
const perSec = (n: number, ms: number) => (ms > 0 ? Math.round((n * 1000) / ms) : 0);

/**
 * Fan-out throughput: `clients` subscribers (the target's full client adapter), `total` messages
 * through the publisher pool, then drain. Deliveries per second over the publishing window (the
 * benchmark's outbound/useful figures) and over first-send → last-arrival.
 */
export async function runThroughput(o: ThroughputOptions, url: string, hooks: ThroughputHooks = {}): Promise<ThroughputResult> {
  const target = getTarget(o.target);
  const started = Date.now();
  const runId = `tp-${target.name}-${started.toString(36)}-${randomSeed()}`;
  const stream = o.stream || runId;
  const health = watchRunner();
  const fdLimit = openFileLimit();
  const ledger = new DeliveryLedger(o.clients, o.total);
  const latency = new LatencyRecorder();
  let foreign = 0;
  let lastArrival = 0;
  let published = 0;
  const clients: TargetClient[] = [];
  for (let i = 0; i < o.clients; i++) {
    const c = target.createClient({ index: i, url, stream, localAddress: sourceAddress(i) });
    c.on('message', (m) => {
      const p = readPayload(m, runId);
      if (!p) return void foreign++;
      const lat = m.at - p.sentAt;
      lastArrival = m.at;
      if (ledger.record(i, p.seq, lat) === 'new') latency.recordMs(lat);
    });
    c.on('error', () => {});
    clients.push(c);
  }
  let phase = 'connect';
  const connections = new ConnectionBook(o.clients);
  const timer = setInterval(() => hooks.progress?.({ phase, connected: connections.connectedCount, published, received: latency.count }), 1000);
  try {
    hooks.log?.(`throughput: ${o.clients} clients on ${target.name}, ${o.total} messages every ${o.intervalMs} ms via ${o.publisher}${o.publisher === 'pool' ? ` x${o.publisherConcurrency}` : ''}`);
    const rampStart = Date.now();
    await rampConnect({ count: o.clients, perSec: o.ramp, connect: (i) => clients[i]!.connect(), book: connections, ...(hooks.signal ? { signal: hooks.signal } : {}) });
    await sleep(1000);
    phase = 'publish';
    const t0 = Date.now();
    const common = { url: o.broadcastUrl ?? url, stream, runId, messages: o.total, intervalMs: o.intervalMs, payloadBytes: o.payloadBytes, ...(o.broadcastKey ? { broadcastKey: o.broadcastKey } : {}) };
    // Only accepted messages are expected of the target (runners/core/ledger.ts).
    const onPublished = (seq: number, ok: boolean) => {
      if (!ok) return;
      published++;
      ledger.accept(seq);
    };
    const pub = startPublisher({ ...common, onPublished, ...(o.publisher === 'pool' ? { concurrency: o.publisherConcurrency } : {}) });
    const onAbort = () => pub.stop();
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    const pr: PublisherResult = await pub.done;
    published = pr.published;
    const publishingMs = Date.now() - t0;
    phase = 'drain';
    const expectedNow = connections.connectedCount * pr.published;
    const end = Date.now() + o.drain * 1000;
    while (Date.now() < end && latency.count < expectedNow && !hooks.signal?.aborted) await sleep(100);
    for (const c of clients) c.close();
    const runner = health.stop();
    const totals = ledger.totals();
    const enc = latency.encode();
    // A client whose connect timed out and that connected later counts as connected (ConnectionBook).
    const { connectedClients, connectFailures, connectFailureCauses } = connections.summary();
    const partial = {
      test: 'throughput' as const,
      target: target.name,
      label: target.name,
      runId,
      stream,
      startedAt: new Date(started).toISOString(),
      params: { ...o, url: undefined, broadcastUrl: undefined, broadcastKey: o.broadcastKey ? '<redacted>' : '' },
      clients: o.clients,
      connectedClients,
      connectFailures,
      connectFailureCauses,
      runnerOpenFileLimit: fdLimit ?? null,
      totalMessages: o.total,
      publishedMessages: pr.published,
      published: pr.published,
      publishFailures: pr.failed,
      publishFailureCauses: pr.failureCauses,
      publishFailureSamples: pr.failures,
      expectedDeliveries: totals.expectedDeliveries,
      receivedDeliveries: totals.receivedDeliveries,
      lostDeliveries: totals.lostDeliveries,
      deliveryRatePct: pct(totals.receivedDeliveries, totals.expectedDeliveries),
      unacceptedDeliveries: totals.unacceptedDeliveries,
      deliveryRateOfConnectedPct: pct(totals.receivedDeliveries, connectedClients * pr.published),
      duplicates: totals.duplicates,
      outOfOrder: totals.outOfOrder,
      foreignMessages: foreign + totals.foreign,
      intervalMs: o.intervalMs,
      targetRateMsgPerSec: o.intervalMs > 0 ? Math.round((1000 / o.intervalMs) * 100) / 100 : null,
      publishingMs,
      outboundDeliveriesPerSec: perSec(totals.expectedDeliveries, publishingMs),
      usefulDeliveriesPerSec: perSec(totals.receivedDeliveries, publishingMs),
      deliveriesPerSecEndToEnd: perSec(totals.receivedDeliveries, Math.max(1, lastArrival - t0)),
      ...summarize(enc),
      latencyHistogram: enc,
      runnerPeakRssMb: runner.runnerPeakRssMb,
      runner,
      elapsedMs: Date.now() - rampStart,
      plannedMs: Math.ceil((o.clients * 1000) / o.ramp) + 1000 + o.total * o.intervalMs + o.drain * 1000,
      aborted: hooks.signal?.aborted ?? false,
    };
    return { ...partial, validity: checkValidity(partial) };
  } finally {
    clearInterval(timer);
    for (const c of clients) c.close();
  }
}
