import { Emitter } from '../../lib/emitter.ts';
import { ReboundError } from '../../lib/errors.ts';
import { DELIVERY_RULES, judge, type ValidityInput, type ValidityRule } from '../../engine/measure/validity.ts';
import { watchRunner } from '../../engine/measure/runner-health.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { cancelled, relayPhases } from '../../engine/session/present.ts';
import { ClientFleet, quantiles } from '../../engine/session/client-pool.ts';
import { deliveredToAll, settlePhase } from '../../engine/session/phases/settle.ts';
import { pct, runFields, runIdentity } from '../../engine/session/results.ts';
import type { RunSession } from '../../engine/session/session.ts';
import { nodesOrUrl } from '../../engine/measure/local-nodes.ts';
import type { RestartValidity } from '../avalanche/validity.ts';
import { deployMessages, type DeployImpactOptions } from './options.ts';
import type { RestartRunResult } from '../avalanche/result.ts';
import type { PhaseEvents } from '../avalanche/run.ts';
import type { PublisherRestart } from './result.ts';
import { spawnPublisher, type StandalonePublisher } from './standalone.ts';

const PHASES = ['start', 'connect', 'publish', 'deploy', 'settle', 'report'] as const;

export type DeployImpactEvents = PhaseEvents<(typeof PHASES)[number]>;

/**
 * Deploy-impact result. Expected deliveries count only what the publisher got accepted, so the
 * publisher's gap is booked as `publisher.gapMessages`, not as the server's loss; clients that
 * lost their connection after the kill (droppedConnections) are expected to be 0: the server does
 * not restart.
 */
export type DeployImpactResult = Awaited<ReturnType<typeof execute>>;

/**
 * Clients stay on the realtime server while the app side restarts: the standalone publisher
 * process is killed after the warm-up, stays down for the deploy, and a new process resumes the
 * schedule where it is now. Messages due meanwhile are the publisher's gap, not the server's loss.
 */
export function runDeployImpact(opts: DeployImpactOptions, ctl: { signal?: AbortSignal } = {}): { events: Emitter<DeployImpactEvents>; result: Promise<DeployImpactResult> } {
  const events = new Emitter<DeployImpactEvents>();
  const result = new Promise<DeployImpactResult>((resolve, reject) => setImmediate(() => execute(opts, events, ctl.signal).then(resolve, reject)));
  return { events, result };
}

async function execute(o: DeployImpactOptions, events: Emitter<DeployImpactEvents>, signal: AbortSignal | undefined) {
  const target = getTarget(o.target);
  const { seed, runId, stream, head } = runIdentity('deploy-impact', target.name, o);
  const messages = deployMessages(o);
  const health = watchRunner();
  const runStart = Date.now();
  events.emit('phase', 'start', o.url ? `using ${o.url}` : `local ${target.name}`);
  const { nodes, urls } = await nodesOrUrl(target, { url: o.url, nodes: 1, broadcastKey: o.broadcastKey });
  const url = urls[0]!;
  const fleet = new ClientFleet({ target, urls: [url], stream, runId, clients: o.clients, messages, seed, reconnectStrategy: o.reconnectStrategy, ...(signal ? { signal } : {}) });
  const s = fleet.session;
  relayPhases(s, events, new Set(PHASES));
  const book = new PublishBook(s, messages);
  try {
    const connectFailures = await fleet.connectAll(o.ramp, `${o.clients} clients at ${o.ramp}/s`);
    await fleet.wait(500);
    const pub = await deploy(o, { url, stream, runId, messages }, fleet, book, events);
    const acceptedCount = book.accepted.reduce((n, a) => n + a, 0);
    const connectedNow = fleet.tracks.map((t) => t.connected);
    await s.run(settlePhase({ maxMs: o.settleMs, stepMs: 200, until: deliveredToAll(s.ledger, (i) => connectedNow[i]!) }));
    cancelled(s);
    s.close();
    const { received, unacked, gaps } = book.arrivals(o.clients);
    const expected = o.clients * acceptedCount;
    const partial = {
      ...head,
      ...fleet.restartFields(),
      publisher: pub,
      totalMessages: messages,
      /** Messages the publisher processes sent or queued (the never-sent part of the gap excluded). */
      sentMessages: book.sentAt.filter((at) => !Number.isNaN(at)).length,
      published: acceptedCount,
      publishFailures: book.failed,
      // The standalone publisher reports refusals without a cause; the kill's unanswered requests are in `publisher`.
      publishFailureCauses: (book.failed > 0 ? { not_accepted: book.failed } : {}) as Record<string, number>,
      publishFailureSamples: book.failures,
      /** clients × accepted messages. */
      expectedDeliveries: expected,
      receivedDeliveries: received,
      /** Accepted messages that did not reach a client: the server's loss. */
      lostDeliveries: expected - received,
      deliveryRatePct: pct(received, expected),
      deliveryRateOfConnectedPct: pct(received, (o.clients - connectFailures) * acceptedCount),
      /** Arrivals of messages the dead publisher sent but never saw acknowledged. */
      deliveredUnacknowledged: unacked,
      /** Per client, the longest time between two consecutive arrivals (the publisher's gap as clients saw it). */
      deliveryGapMs: quantiles(gaps),
      ...runFields(health.stop(), Date.now() - runStart, deployImpactPlannedMs(o)),
    };
    events.emit('phase', 'report', `${partial.droppedConnections} dropped, publisher down ${pub.downtimeMs} ms (${pub.gapMessages} messages), ${partial.lostDeliveries} deliveries lost by the server`);
    return { ...partial, validity: deployValidity(partial) } satisfies RestartRunResult;
  } finally {
    s.close();
    await Promise.all(book.processes.map((p) => p.stop('SIGKILL')));
    await nodes?.close();
  }
}

/** What the standalone publisher processes reported, per seq, booked into the session as the target accepts. */
class PublishBook {
  readonly sentAt: Float64Array;
  readonly accepted: Uint8Array;
  readonly answered: Uint8Array;
  readonly failures: string[] = [];
  failed = 0;
  /** When the new process got its first message (at or after `resumeFrom`) accepted. */
  resumedAtMs: number | null = null;
  resumeFrom = Infinity;
  /** Every publisher process started, killed at the end. */
  readonly processes: StandalonePublisher[] = [];

  constructor(
    private readonly s: RunSession,
    private readonly messages: number,
  ) {
    this.sentAt = new Float64Array(messages + 1).fill(NaN);
    this.accepted = new Uint8Array(messages + 1);
    this.answered = new Uint8Array(messages + 1);
  }

  readonly onPublished: Parameters<typeof spawnPublisher>[0] = (m) => {
    if (m.seq < 1 || m.seq > this.messages) return;
    this.sentAt[m.seq] = m.sentAt;
    if (m.type === 'sent') return;
    this.answered[m.seq] = 1;
    if (m.ok) {
      this.accepted[m.seq] = 1;
      this.s.accept(m.seq, { sentAt: m.sentAt, answeredAt: m.at });
      if (m.seq >= this.resumeFrom && this.resumedAtMs === null) this.resumedAtMs = m.at;
    } else {
      this.failed++;
      if (this.failures.length < 20) this.failures.push(`seq ${m.seq}: not accepted`);
    }
  };

  /** Start one publisher process that reports here. */
  async spawn(): Promise<StandalonePublisher> {
    const p = await spawnPublisher(this.onPublished);
    this.processes.push(p);
    return p;
  }

  /** Per client: arrivals of accepted messages, of never-answered ones, and the longest time between two arrivals. */
  arrivals(clients: number) {
    let received = 0;
    let unacked = 0;
    const gaps: number[] = [];
    for (let i = 0; i < clients; i++) {
      let prev = NaN;
      let longest = 0;
      for (let seq = 1; seq <= this.messages; seq++) {
        const lat = this.s.ledger.latencyOf(i, seq);
        if (lat === undefined) continue;
        if (this.accepted[seq]) received++;
        else unacked++;
        const at = this.sentAt[seq]! + lat;
        if (!Number.isNaN(prev) && at - prev > longest) longest = at - prev;
        if (!Number.isNaN(at)) prev = at;
      }
      if (!Number.isNaN(prev)) gaps.push(longest);
    }
    return { received, unacked, gaps };
  }
}

/**
 * The deploy: a first publisher process runs the schedule through the warm-up, is killed, stays
 * down for the deploy, and a new process resumes the schedule at the message due now.
 */
async function deploy(o: DeployImpactOptions, at: { url: string; stream: string; runId: string; messages: number }, fleet: ClientFleet, book: PublishBook, events: Emitter<DeployImpactEvents>): Promise<PublisherRestart> {
  const { messages } = at;
  const intervalMs = 1000 / o.rate;
  const common = { target: o.target, url: o.broadcastUrl ?? at.url, stream: at.stream, runId: at.runId, lastSeq: messages, intervalMs, payloadBytes: o.payloadBytes, ...(o.broadcastKey ? { broadcastKey: o.broadcastKey } : {}) };
  const first = await book.spawn();
  const scheduleStart = Date.now();
  first.start({ ...common, firstSeq: 1 });
  events.emit('phase', 'publish', `${messages} messages at ${o.rate}/s from publisher pid ${first.pid}; deploy after ${o.warmupMs} ms`);
  await fleet.wait(scheduleStart + o.warmupMs - Date.now());
  if (first.error) throw new ReboundError('RR_ERR_PUBLISHER_PROCESS', `the standalone publisher could not publish: ${first.error}`);

  const signal = o.signal === 'kill' ? 'SIGKILL' : 'SIGTERM';
  const killedAtMs = Date.now();
  fleet.markRestart(killedAtMs, killedAtMs + o.publishAfterMs + 30_000);
  const dueAtKill = Math.min(messages, Math.floor((killedAtMs - scheduleStart) / intervalMs) + 1);
  const pub: PublisherRestart = { signal, ok: true, error: null, oldPid: first.pid, newPid: null, killedAt: new Date(killedAtMs).toISOString(), killedAtMs, exitedAtMs: null, respawnedAtMs: null, resumedAtMs: null, downtimeMs: null, processStartMs: null, gapMessages: 0, gapSeqs: null, unacknowledgedAtKill: 0, resumedAtSeq: null };
  events.emit('phase', 'deploy', `${signal} publisher pid ${first.pid}; new process in ${o.publisherDownMs} ms`);
  await first.stop(signal);
  pub.exitedAtMs = Date.now();
  // Requests the dead process had sent or queued but never saw answered: its backlog, lost with it.
  pub.unacknowledgedAtKill = book.sentAt.filter((t, seq) => !Number.isNaN(t) && !book.answered[seq]).length;
  await fleet.wait(pub.exitedAtMs + o.publisherDownMs - Date.now());
  const respawnAt = Date.now();
  try {
    const second = await book.spawn();
    pub.newPid = second.pid;
    pub.respawnedAtMs = Date.now();
    pub.processStartMs = pub.respawnedAtMs - respawnAt;
    // The schedule did not wait for the deploy: resume at the message due now.
    const dueNow = Math.floor((Date.now() - scheduleStart) / intervalMs) + 1;
    book.resumeFrom = Math.max(dueNow, dueAtKill + 1);
    if (book.resumeFrom > messages) throw new Error(`the new publisher came up after the schedule ended (seq ${book.resumeFrom} > ${messages})`);
    pub.resumedAtSeq = book.resumeFrom;
    second.start({ ...common, firstSeq: book.resumeFrom });
    const left = (messages - book.resumeFrom + 1) * intervalMs + 15_000;
    const outcome = await Promise.race([second.done.then(() => 'done'), fleet.wait(left).then(() => 'timeout')]);
    if (outcome === 'timeout') throw new Error(`the new publisher did not finish within ${left} ms`);
  } catch (err) {
    pub.ok = false;
    pub.error = (err as Error).message;
  }
  return gapOf(pub, book, messages);
}

/** When publishing resumed, and the seqs never accepted between the last before the kill and the first after. */
function gapOf(pub: PublisherRestart, book: PublishBook, messages: number): PublisherRestart {
  pub.resumedAtMs = book.resumedAtMs;
  if (book.resumedAtMs === null && pub.ok) {
    pub.ok = false;
    pub.error = 'the new publisher never got a message accepted';
  }
  pub.downtimeMs = book.resumedAtMs === null ? null : book.resumedAtMs - pub.killedAtMs;
  // accepted[0] is never set: no message accepted before the kill reads as 0, none after as -1.
  const lastBefore = Math.max(0, book.accepted.subarray(0, Math.min(book.resumeFrom, messages + 1)).lastIndexOf(1));
  const firstAfter = book.accepted.indexOf(1, lastBefore + 1);
  if (firstAfter > lastBefore + 1) pub.gapSeqs = { from: lastBefore + 1, to: firstAfter - 1 };
  pub.gapMessages = pub.gapSeqs ? pub.gapSeqs.to - pub.gapSeqs.from + 1 : 0;
  return pub;
}

type DeployValidityInput = ValidityInput & { sentMessages: number; publisher: PublisherRestart };

const DEPLOY_RULES: readonly ValidityRule<DeployValidityInput, RestartValidity['flags'][number]['code']>[] = [
  ...DELIVERY_RULES,
  { code: 'RESTART_FAILED', severity: 'fatal', check: (r) => (r.publisher.ok ? undefined : `the publisher's restart failed: ${r.publisher.error}`) },
];

/**
 * Shared rules over what was answered and accepted (the gap is the publisher's and never flags
 * PARTIAL_PUBLISH), plus RESTART_FAILED when the publisher did not come back.
 */
export function deployValidity(r: DeployValidityInput): RestartValidity {
  // Requests that died with the old process got no answer: only answered ones can be refused.
  return judge(DEPLOY_RULES, { ...r, totalMessages: r.sentMessages - r.publisher.unacknowledgedAtKill });
}

/** The run's one plan: the module's plannedMs and the OVERRAN_PLAN rule's. */
export const deployImpactPlannedMs = (o: DeployImpactOptions) => Math.ceil((o.clients * 1000) / o.ramp) + 500 + o.warmupMs + o.publisherDownMs + o.publishAfterMs + o.settleMs + 10_000;
