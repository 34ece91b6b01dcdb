import { Emitter } from '../../lib/emitter.ts';
import { watchRunner, type RunnerHealth } from '../../engine/measure/runner-health.ts';
import { openFileLimit } from '../../engine/measure/runner-limits.ts';
import { ClientFleet, droppedTracks, quantiles } from '../../engine/session/client-pool.ts';
import { publishPhase } from '../../engine/session/phases/publish.ts';
import { deliveredToAll, settlePhase } from '../../engine/session/phases/settle.ts';
import { addMaps, pct, runIdentity } from '../../engine/session/results.ts';
import { cancelled, relayPhases } from '../../engine/session/present.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { downtime, herdReport, recoveryTimes, SeriesSampler, type SeriesPoint } from './herd.ts';
import { NodeFront } from './front.ts';
import { nodesOrUrl, type LocalNodes } from '../../engine/measure/local-nodes.ts';
import type { PublisherResult } from '../../engine/measure/publisher.ts';
import type { RunSession } from '../../engine/session/session.ts';
import type { TargetDefinition } from '../../engine/targets/types.ts';
import { probePorts } from '../../engine/measure/port-probe.ts';
import { hasSharedBroker, messagesFor, type AvalancheOptions } from './options.ts';
import { addSupervised, performRestart, type RestartConfig } from '../../engine/measure/restart.ts';
import type { BenchmarkAvalancheFields } from './benchmark-fields.ts';
import type { RestartRunResult } from './result.ts';
import { checkRestartValidity } from './validity.ts';
import { benchmarkAvalancheFields } from './benchmark-fields.ts';

const PHASES = ['start', 'connect', 'warmup', 'restart', 'herd', 'settle', 'report'] as const;

/** A restart-style run's events (avalanche's, deploy-impact's): each phase by name, with its detail line. */
export type PhaseEvents<N extends string> = { phase: (name: N, detail: string) => void };
export type AvalancheEvents = PhaseEvents<(typeof PHASES)[number]>;

/**
 * The avalanche result. The issue's names first (droppedConnections, recoveryMs, neverReconnected,
 * downtimeMs, lostDeliveries, duplicates, deliveryRatePct, herd, restart); the benchmark's
 * avalanche names where they mean the same (clients, initiallyConnected, reconnected,
 * neverReconnectedPct, disconnectSpreadMs, reconnectRatePct).
 */
export type AvalancheResult = Awaited<ReturnType<typeof execute>>;

/**
 * One avalanche: start the target (K nodes, or use --url), connect N clients, publish at a fixed
 * rate, restart the target after the warm-up while publishing goes on, wait for every dropped
 * client (or the timeout), settle, report from the one ledger. Never prints.
 */
export function runAvalanche(opts: AvalancheOptions, config: RestartConfig = {}, ctl: { signal?: AbortSignal } = {}): { events: Emitter<AvalancheEvents>; result: Promise<AvalancheResult> } {
  const events = new Emitter<AvalancheEvents>();
  const result = new Promise<AvalancheResult>((resolve, reject) => setImmediate(() => execute(opts, config, events, ctl.signal).then(resolve, reject)));
  return { events, result };
}

async function execute(o: AvalancheOptions, config: RestartConfig, events: Emitter<AvalancheEvents>, signal: AbortSignal | undefined) {
  const target = getTarget(o.target);
  const { seed, runId, stream, head } = runIdentity('avalanche', target.name, o);
  const messages = messagesFor(o);
  const health = watchRunner();
  const runStart = Date.now();
  const { nodes, urls, front } = await openNodes(o, target, events);
  // Behind a front every client and the publisher use its one address; otherwise client i uses node i mod K.
  const clientUrls = front ? [front.url] : urls;
  // Nodes on a shared broker are one service: one publisher (on a node the restart spares, the
  // first, unless every node restarts); without one, one publisher per node on the same schedule.
  const publisherUrls = front ? [front.url] : hasSharedBroker(target) ? [urls[0]!] : urls;
  const fleet = new ClientFleet({ target, urls: clientUrls, stream, runId, clients: o.clients, messages, seed, reconnectStrategy: o.reconnectStrategy, reconnectBaseMs: o.reconnectBaseMs, ...(signal ? { signal } : {}) });
  const s = fleet.session;
  relayPhases(s, events, new Set(PHASES));
  const sampler = new SeriesSampler(() => fleet.connectedCount());
  try {
    const rampStart = Date.now();
    const connectFailures = await fleet.connectAll(o.ramp, `${o.clients} clients at ${o.ramp}/s over ${front ? `a front (${front.url}) before ` : ''}${urls.join(', ')}`);
    const rampElapsedMs = Date.now() - rampStart;
    await fleet.wait(500);
    events.emit('phase', 'warmup', `${messages} messages at ${o.rate}/s on ${stream}; restart (${o.restart}) after ${o.warmupMs} ms`);
    const pub = startPublishers(o, s, publisherUrls, messages);
    await fleet.wait(o.warmupMs);
    const herd = await restartAndHerd({ o, config, events, target, runId, nodes, urls, front, fleet, sampler });
    const pubs = (await Promise.all(pub.phases)).map((p) => p.result);
    const publisherOf = (i: number) => (publisherUrls.length === 1 ? 0 : fleet.nodeOf(i));
    // Each client connected now waits for what its own publisher got accepted.
    const connectedNow = fleet.tracks.map((t) => t.connected);
    await s.run(settlePhase({ maxMs: o.settleMs, stepMs: 200, until: deliveredToAll(s.ledger, (i) => connectedNow[i]!, (i, seq) => pub.accepted[publisherOf(i)]![seq] === 1) }));
    cancelled(s);
    s.close();
    const endAt = Date.now();
    const series = sampler.stop();
    const split = acceptedSplit(s, o.clients, messages, pub.accepted, publisherOf);
    // Unlike the jitter runner, an avalanche expects every planned message (see result.ts
    // `expectedDeliveries`): refusals while the target was down are what the restart cost, and
    // they are split out (lostUnpublishedDeliveries vs lostAcceptedDeliveries). Refused messages
    // are then booked publisher_side in the loss causes (restartFields reads the ledger after this).
    s.ledger.acceptAll();
    const run: AvalancheRun = { o, target, urls, front, fleet, ...herd, series, messages, accepted: pub.accepted, failureTimes: pub.failureTimes, pubs, connectFailures, split, runner: health.stop() };
    const partial = {
      ...head,
      ...herdFields(run),
      ...deliveryPart(run),
      runnerOpenFileLimit: openFileLimit() ?? null,
      elapsedMs: endAt - runStart,
      /** The benchmark's names: the connect phase, and the whole run (= elapsedMs). */
      rampElapsedMs,
      totalElapsedMs: endAt - runStart,
      plannedMs: avalanchePlannedMs(o),
    };
    events.emit('phase', 'report', `${partial.droppedConnections} dropped, ${partial.neverReconnected} never back, ${partial.lostDeliveries} deliveries lost`);
    return { ...partial, validity: checkRestartValidity({ ...partial, restart: herd.restart, recoveryTimeoutMs: o.recoveryTimeoutMs, frontFdErrors: partial.front?.fdErrors ?? 0 }) } satisfies RestartRunResult & BenchmarkAvalancheFields;
  } finally {
    sampler.stop();
    s.close();
    await front?.close();
    await nodes?.close();
  }
}

/** The target's nodes (started here, or the one at --url), supervised for a command or hook restart, and the TCP front before them (--front). */
async function openNodes(o: AvalancheOptions, target: TargetDefinition, events: Emitter<AvalancheEvents>) {
  events.emit('phase', 'start', o.url ? `using ${o.url}` : `${o.nodes} local ${target.name} node(s)${o.workers > 1 ? ` with ${o.workers} workers` : ''}`);
  const { nodes, urls } = await nodesOrUrl(target, o);
  if (nodes && (o.restart === 'command' || o.restart === 'hook')) nodes.supervise(true);
  try {
    return { nodes, urls, front: o.front ? await NodeFront.start(urls) : undefined };
  } catch (err) {
    await nodes?.close();
    throw err;
  }
}

/** One publish phase per publisher URL on one schedule: it goes on through the restart and the herd (awaited after). */
function startPublishers(o: AvalancheOptions, s: RunSession, publisherUrls: string[], messages: number) {
  const accepted = publisherUrls.map(() => new Uint8Array(messages + 1));
  const failureTimes: number[] = [];
  const phases = publisherUrls.map((url, n) =>
    s.run(
      publishPhase({
        url: o.broadcastUrl ?? url,
        messages,
        intervalMs: 1000 / o.rate,
        payloadBytes: o.payloadBytes,
        broadcastKey: o.broadcastKey || undefined,
        timeoutMs: 5000,
        progressEveryMs: 0,
        onPublished: (seq, ok) => void (ok ? (accepted[n]![seq] = 1) : failureTimes.push(Date.now())),
      }),
    ),
  );
  return { accepted, failureTimes, phases };
}

interface HerdContext {
  o: AvalancheOptions;
  config: RestartConfig;
  events: Emitter<AvalancheEvents>;
  target: TargetDefinition;
  runId: string;
  nodes: LocalNodes | undefined;
  urls: string[];
  front: NodeFront | undefined;
  fleet: ClientFleet;
  sampler: SeriesSampler;
}

/** Restart the target, then wait for the herd: every client the restart dropped back, or the recovery timeout. */
async function restartAndHerd({ o, config, events, target, runId, nodes, urls, front, fleet, sampler }: HerdContext) {
  const s = fleet.session;
  const restartAt = Date.now();
  const deadline = restartAt + o.recoveryTimeoutMs;
  fleet.markRestart(restartAt, deadline);
  front?.markRestart();
  const initiallyConnected = fleet.tracks.filter((t) => t.connectedAtRestart).length;
  sampler.start(restartAt, initiallyConnected);
  const probe = probePorts(urls);
  events.emit('phase', 'restart', `${o.restart} with ${initiallyConnected} clients connected`);
  const restart = await performRestart({ mode: o.restart, nodes, urls, workers: o.workers, restartNodes: o.restartNodes, rollingGapMs: o.rollingGapMs, termGraceMs: o.termGraceMs, broadcastKey: o.broadcastKey, config, runId, target: target.name });
  if (!restart.ok) events.emit('phase', 'restart', `FAILED: ${restart.error}`);

  // A restart that the clients have not noticed yet would look "all back": wait a moment after
  // it ends, and longer when nothing has dropped yet (a command whose effect comes later).
  const herdDone = () => {
    const since = Date.now() - restart.endedAtMs;
    const dropped = droppedTracks(fleet.tracks).length;
    return fleet.allBack() && since > 1000 && (dropped > 0 || since > 5000 || !restart.ok);
  };
  await s.run(settlePhase({ label: 'herd', maxMs: Math.max(0, deadline - Date.now()), stepMs: 100, until: herdDone, detail: `waiting up to ${Math.max(0, deadline - Date.now())} ms for ${initiallyConnected} clients` }));
  cancelled(s);
  const recoveryTimedOut = !herdDone();
  const herdEnd = Date.now();
  restart.portProbe = probe.stop();
  if (nodes) {
    await nodes.settleSupervised();
    addSupervised(restart, nodes.supervised);
  }
  return { restart, restartAt, herdEnd, recoveryTimedOut };
}

/** What the avalanche report reads: the run's nodes and fleet, the restart and herd, the publishers' books. */
interface AvalancheRun extends Awaited<ReturnType<typeof restartAndHerd>>, Pick<HerdContext, 'o' | 'target' | 'urls' | 'front' | 'fleet'> {
  series: SeriesPoint[];
  messages: number;
  /** Per publisher, seq -> 1 when the target accepted it. */
  accepted: Uint8Array[];
  failureTimes: number[];
  pubs: PublisherResult[];
  connectFailures: number;
  split: ReturnType<typeof acceptedSplit>;
  runner: RunnerHealth;
}

/** Who the restart dropped, how and how fast they came back, and the herd. */
function herdFields({ o, target, urls, front, fleet, restart, restartAt, herdEnd, recoveryTimedOut, series }: AvalancheRun) {
  // A rolling restart times each client from its own node's restart; otherwise from the restart's start.
  const restartAtOf = (i: number) => (restart.mode === 'rolling' ? restart.nodes.find((n) => n.node === fleet.nodeOf(i) && n.signalAt !== null)?.signalAt : undefined) ?? restartAt;
  const dropped = droppedTracks(fleet.tracks);
  const never = dropped.filter((t) => !t.connected).length;
  // The same clients timed from their node listening again: client backoff and handshake without the server's boot.
  const listeningAtOf = (i: number) => restart.nodes.find((n) => n.node === fleet.nodeOf(i) && n.listeningAt !== null)?.listeningAt;
  // Behind a front a client may come back on a node that never went down: no node's listening time is its own.
  const fromListening = !front && restart.nodes.length && restart.nodes.every((n) => n.listeningAt !== null) ? quantiles(recoveryTimes(fleet.tracks, (i) => listeningAtOf(i) ?? restartAt)) : null;
  const down = downtime(fleet.tracks, herdEnd);
  const drops = dropped.map((t) => t.firstDropAt);
  return {
    /** Base URL of each node the clients used. */
    nodeUrls: urls,
    /** The TCP front before the nodes (--front): how it spread the clients; null without one. */
    front: front ? { ...front.report } : null,
    restart,
    ...fleet.restartFields(),
    reconnectRatePct: pct(dropped.length - never, dropped.length),
    neverReconnectedPct: pct(never, dropped.length),
    /** Up to 10 clients that never came back: what the runner saw of them (ms relative to the restart). */
    neverReconnectedSample: fleet.tracks.flatMap((t, i) => (t.connectedAtRestart && t.drops > 0 && !t.connected ? [{ client: i, node: fleet.nodeOf(i), drops: t.drops, attempts: t.attempts, droppedAtMs: t.firstDropAt - restartAt, attemptPending: t.attemptStartedAt > 0 }] : [])).slice(0, 10),
    /** Restart (of the client's node) to the client connected and resubscribed, ms. */
    recoveryMs: quantiles(recoveryTimes(fleet.tracks, restartAtOf)),
    ...benchmarkAvalancheFields(dropped, { recoveryTimeoutMs: o.recoveryTimeoutMs, downtimeMs: down.downtimeMs }),
    /** The same, timed from the client's node listening again (null when the runner did not see it): reconnect cost without the server's boot. */
    recoveryFromListeningMs: fromListening,
    /** First drop to last reconnect, ms; to the end of the wait when `downtimeOpenEnded`. */
    downtimeMs: down.downtimeMs,
    downtimeOpenEnded: down.openEnded,
    /** First to last disconnect, ms. */
    disconnectSpreadMs: drops.length ? Math.max(...drops) - Math.min(...drops) : 0,
    /** Reconnects on which the server restored the session (CSR recovered, AnyCable restored). */
    resumedReconnects: fleet.resumes,
    /** Replay protocols: resubscribes whose history the server could not serve (a memory broker restarted); null for others. */
    historyNotFound: target.capabilities.resume === 'history' ? fleet.session.counters.historyRejected : null,
    /** Disconnects before the restart (the target or network was unstable during warm-up). */
    dropsBeforeRestart: fleet.dropsBeforeRestart,
    /** The client library's own words per disconnect, e.g. socket.io's 'io server disconnect' (it then does not reconnect by itself). */
    disconnectDetails: fleet.disconnectDetails,
    herd: herdReport(fleet, restartAt, series, herdEnd),
    recoveryTimedOut,
  };
}

/** What the publishers got accepted and when they failed, and the deliveries: every planned message expected, what the server promised split out. */
function deliveryPart({ o, fleet, restart, restartAt, messages, accepted, failureTimes, pubs, connectFailures, split, runner }: AvalancheRun) {
  const totals = fleet.session.ledger.totals();
  const restartWindowEnd = Math.max(restart.endedAtMs, ...droppedTracks(fleet.tracks).map((t) => t.backAt)) + 2000;
  const during = failureTimes.filter((t) => t >= restartAt && t <= restartWindowEnd).length;
  return {
    totalMessages: messages,
    /** Messages accepted by the target (one publisher per node without a shared broker: a message counts once when every node took it). */
    published: accepted[0]!.filter((_, seq) => accepted.every((a) => a[seq])).length,
    publishFailures: failureTimes.length,
    publishFailuresDuringRestart: during,
    publishFailuresOutsideRestart: failureTimes.length - during,
    publishFailureCauses: addMaps(pubs.map((p) => p.failureCauses)),
    publishFailureSamples: pubs.flatMap((p) => p.failures).slice(0, 20),
    /** clients × messages: what a target that never went down would have delivered. */
    expectedDeliveries: totals.expectedDeliveries,
    receivedDeliveries: totals.receivedDeliveries,
    lostDeliveries: totals.lostDeliveries,
    deliveryRatePct: pct(totals.receivedDeliveries, totals.expectedDeliveries),
    deliveryRateOfConnectedPct: pct(totals.receivedDeliveries, (o.clients - connectFailures) * messages),
    /** Deliveries of messages the client's node accepted: what the server itself promised. */
    acceptedDeliveries: split.acceptedDeliveries,
    /** Of those, not delivered: the server's own loss (history gone with the process, at-most-once). */
    lostAcceptedDeliveries: split.lostAccepted,
    deliveryRateOfAcceptedPct: pct(split.acceptedDeliveries - split.lostAccepted, split.acceptedDeliveries),
    /**
     * Deliveries of messages the publisher saw refused (while the node was down): expected − accepted.
     * Not all are lost: `unacceptedDeliveries` of them arrived anyway, so lostDeliveries =
     * lostAcceptedDeliveries + lostUnpublishedDeliveries − unacceptedDeliveries.
     */
    lostUnpublishedDeliveries: totals.expectedDeliveries - split.acceptedDeliveries,
    /** Deliveries of messages the publisher saw refused (an error or timeout after the broadcast went out) that arrived anyway. */
    unacceptedDeliveries: split.refusedDelivered,
    perfectClients: totals.perfectClients,
    runnerPeakRssMb: runner.runnerPeakRssMb,
    runner,
  };
}

/** What the server promised (deliveries of messages the client's publisher got accepted, and of those the lost) vs refused yet delivered. */
function acceptedSplit(s: RunSession, clients: number, messages: number, accepted: Uint8Array[], publisherOf: (i: number) => number) {
  let acceptedDeliveries = 0;
  let lostAccepted = 0;
  // Refused by the publisher's count yet delivered (a 5xx or timeout after the broadcast went out):
  // not lost, so the loss breakdown subtracts them from the refused deliveries.
  let refusedDelivered = 0;
  for (let i = 0; i < clients; i++) {
    const acc = accepted[publisherOf(i)]!;
    for (let seq = 1; seq <= messages; seq++) {
      const delivered = s.ledger.latencyOf(i, seq) !== undefined;
      if (!acc[seq]) {
        if (delivered) refusedDelivered++;
        continue;
      }
      acceptedDeliveries++;
      if (!delivered) lostAccepted++;
    }
  }
  return { acceptedDeliveries, lostAccepted, refusedDelivered };
}

/** The run's one plan: the module's plannedMs and the OVERRAN_PLAN rule's. A rolling restart takes each node in turn. */
export const avalanchePlannedMs = (o: AvalancheOptions) =>
  Math.ceil((o.clients * 1000) / o.ramp) + 500 + o.warmupMs + Math.max(o.publishAfterMs, o.recoveryTimeoutMs + (o.restart === 'rolling' ? o.nodes * (o.rollingGapMs + o.termGraceMs) : 0)) + o.settleMs + 5000 * o.nodes + 5000;
