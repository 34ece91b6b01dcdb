import { randomSeed } from '../../lib/rng.ts';
import { watchRunner } from '../../engine/measure/runner-health.ts';
import { openFileLimit } from '../../engine/measure/runner-limits.ts';
import { checkValidity } from '../../engine/measure/validity.ts';
import { connectPhase } from '../../engine/session/phases/connect.ts';
import { publishPhase } from '../../engine/session/phases/publish.ts';
import { allDelivered, settlePhase } from '../../engine/session/phases/settle.ts';
import { logLines, relayProgress, type RunHooks } from '../../engine/session/present.ts';
import { deliveryFields, publisherFields, runFields } from '../../engine/session/results.ts';
import { RunSession } from '../../engine/session/session.ts';
import { getTarget } from '../../engine/targets/index.ts';
import type { ThroughputOptions } from './options.ts';

/** The run's one plan: the module's plannedMs and the OVERRAN_PLAN rule's. */
export const throughputPlannedMs = (o: ThroughputOptions) => Math.ceil((o.clients * 1000) / o.ramp) + 1000 + o.total * o.intervalMs + o.drain * 1000 + 5000;

const perSec = (n: number, ms: number) => (ms > 0 ? Math.round((n * 1000) / ms) : 0);

/**
 * Fan-out throughput: `clients` subscribers (the target's full client adapter), `total` messages
 * through the publisher pool, then drain. Deliveries per second over the publishing window (the
 * benchmark's outbound/useful figures) and over first-send → last-arrival.
 */
export async function runThroughput(o: ThroughputOptions, url: string, hooks: RunHooks = {}) {
  const target = getTarget(o.target);
  const started = Date.now();
  const runId = `tp-${target.name}-${started.toString(36)}-${randomSeed()}`;
  const stream = o.stream || runId;
  const health = watchRunner();
  const fdLimit = openFileLimit();
  let lastArrival = 0;
  const s = new RunSession({ target, urlOf: () => url, clients: o.clients, messages: o.total, runId, stream, seed: 0, ...(hooks.signal ? { signal: hooks.signal } : {}), hooks: { delivery: (d) => void (lastArrival = d.message.at) } });
  hooks.events?.(s.events);
  logLines(s.events, hooks.log, 'throughput');
  relayProgress(s.events, hooks.progress, () => ({ connected: s.upCount, published: s.ledger.acceptedMessages, received: s.latency.count, deliveredPct: 0 }));
  try {
    const rampStart = Date.now();
    await s.run(connectPhase({ perSec: o.ramp, detail: `${o.clients} clients on ${target.name}, ${o.total} messages every ${o.intervalMs} ms via ${o.publisher}${o.publisher === 'pool' ? ` x${o.publisherConcurrency}` : ''}` }));
    await s.nap(1000);
    // Only accepted messages are expected of the target (engine/measure/ledger.ts).
    const { result: pr, t0 } = await s.run(publishPhase({ url: o.broadcastUrl ?? url, messages: o.total, intervalMs: o.intervalMs, payloadBytes: o.payloadBytes, broadcastKey: o.broadcastKey, progressEveryMs: 1000, ...(o.publisher === 'pool' ? { concurrency: o.publisherConcurrency } : {}) }));
    const publishingMs = Date.now() - t0;
    await s.run(settlePhase({ label: 'drain', maxMs: o.drain * 1000, stepMs: 100, until: allDelivered(s) }));
    s.close();
    const runner = health.stop();
    const d = deliveryFields(s, pr.published);
    const partial = {
      test: 'throughput' as const,
      target: target.name,
      label: target.name,
      runId,
      stream,
      startedAt: new Date(started).toISOString(),
      params: { ...o, url: undefined, broadcastUrl: undefined, broadcastKey: o.broadcastKey ? '<redacted>' : '' },
      // The pool publisher does not promise order: the reorders it causes show up in outOfOrder.
      ...d,
      runnerOpenFileLimit: fdLimit ?? null,
      totalMessages: o.total,
      publishedMessages: pr.published,
      ...publisherFields(pr),
      intervalMs: o.intervalMs,
      targetRateMsgPerSec: o.intervalMs > 0 ? Math.round((1000 / o.intervalMs) * 100) / 100 : null,
      publishingMs,
      /** expectedDeliveries / publishing seconds (the benchmark's outbound rate). */
      outboundDeliveriesPerSec: perSec(d.expectedDeliveries, publishingMs),
      /** receivedDeliveries / publishing seconds. */
      usefulDeliveriesPerSec: perSec(d.receivedDeliveries, publishingMs),
      /** receivedDeliveries / (last arrival − first send). */
      deliveriesPerSecEndToEnd: perSec(d.receivedDeliveries, Math.max(1, lastArrival - t0)),
      ...runFields(runner, Date.now() - rampStart, throughputPlannedMs(o)),
      aborted: s.aborted,
      ...s.lossReport(),
    };
    return { ...partial, validity: checkValidity(partial) };
  } finally {
    s.close();
  }
}
