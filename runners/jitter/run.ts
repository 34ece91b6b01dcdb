import { CATALOG, parsePlan, planNeedsProxy, type DisruptionKind } from '../../chaos/plans/catalog.ts';
import { openProxyFleet, type ProxyFleet } from '../../chaos/plans/proxy-fleet.ts';
import { buildSchedule, scheduleEndMs, type ChaosEvent, type PlanStep } from '../../chaos/plans/schedule.ts';
import { Emitter } from '../../lib/emitter.ts';
import { randomSeed } from '../../lib/rng.ts';
import { sleep } from '../../lib/time.ts';
import { sourceAddress } from '../core/addresses.ts';
import { ConnectionBook, rampConnect } from '../core/connections.ts';
import { PROGRESS_EVERY_MS, type JitterProgress } from './progress.ts';
export type { JitterProgress } from './progress.ts';
import { DisruptionTracker } from '../core/disruptions.ts';
import { SeriesRecorder } from '../core/timeseries.ts';
import { watchTarget } from '../core/target-usage.ts';
import { LatencyRecorder, summarize } from '../core/latency.ts';
import { DeliveryLedger } from '../core/ledger.ts';
import { EpochBook } from '../core/epoch-book.ts';
import { ClientTimelines } from '../core/client-timelines.ts';
import { resumeProtocolOf } from '../core/loss-causes.ts';
import { readPayload, startPublisher, type PublisherResult } from '../core/publisher.ts';
import { encodeRanges } from '../core/seq-ranges.ts';
import { listenWindow, SUBSCRIBER_ONLY_CODES, type Listening } from './listen.ts';
import { watchRunner, type RunnerHealth } from '../core/runner-health.ts';
import { openFileLimit } from '../core/runner-limits.ts';
import { checkValidity } from '../core/validity.ts';
import { getTarget } from '../targets/index.ts';
import { reconnectRng } from '../targets/seeded-jitter.ts';
import { afterOffline, ManualReconnects, offlineAfterDropMs } from '../targets/reconnect.ts';
import type { TargetClient, TargetDefinition } from '../targets/types.ts';
import type { JitterOptions } from './options.ts';
import type { JitterResult } from './result.ts';

export interface JitterEvents {
  phase: (name: 'connect' | 'publish' | 'listen' | 'settle' | 'report', detail: string) => void;
  progress: (p: JitterProgress) => void;
}


export interface JitterRun {
  events: Emitter<JitterEvents>;
  result: Promise<JitterResult>;
}

/** The drop window: the benchmark's `duration` when given, else the publishing window. */
export const dropWindowMs = (o: { duration: number; msgs: number; interval: number }) => (o.duration > 0 ? o.duration * 1000 : o.msgs * o.interval);
/** A drop interval at or above the window (the benchmark's jitter=999999 "latency mode") means no drops at all. */
export const dropsWithin = (o: { jitter: number; duration: number; msgs: number; interval: number }) => o.jitter > 0 && o.jitter * 1000 < dropWindowMs(o);

/**
 * The resilience engine behind `bench:jitter` and every chaos plan: ramp clients, publish,
 * disrupt on the seeded schedule (client drops and/or proxy toxics), let the protocol recover,
 * then report from the ledger. It never prints; presentation subscribes to `events`.
 * `url` is the running target's base URL.
 */
export function runJitter(opts: JitterOptions, url: string, local?: { targetPid?: number; signal?: AbortSignal }): JitterRun {
  const events = new Emitter<JitterEvents>();
  const result = new Promise<JitterResult>((resolve, reject) => {
    // Start on the next turn so callers can attach listeners first.
    setImmediate(() => new JitterSession(opts, url, events, local?.targetPid, local?.signal).execute().then(resolve, reject));
  });
  return { events, result };
}

const pct = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1e6) / 1e4 : 0);

class JitterSession {
  private readonly target: TargetDefinition;
  private readonly seed: number;
  private readonly startedAt = new Date();
  private readonly runId: string;
  private readonly stream: string;
  private readonly kinds: DisruptionKind[];
  private readonly steps: PlanStep[];
  private readonly ledger: DeliveryLedger;
  /** Loss to a broker that came back empty, told apart from the target's (BROKER_EPOCH_CHANGED). */
  private readonly epochs: EpochBook;
  /** Each client's offline spans and resume outcomes: why every lost delivery was lost (lossByCause). */
  private readonly timelines: ClientTimelines;
  private readonly latency = new LatencyRecorder();
  private readonly tracker: DisruptionTracker;
  /** Per-second series for the visual report. */
  private readonly series: SeriesRecorder;
  private readonly timeline: ChaosEvent[] = [];
  private readonly applied = new Set<number>();
  private readonly lastDrop: (ChaosEvent | undefined)[];
  private readonly manual: ManualReconnects;
  private readonly sentAtMs: number[];
  private readonly counters = { reconnects: 0, resumes: 0, reconnectFailures: 0, historyRejected: 0, foreign: 0 };
  private readonly disconnectReasons: Record<string, number> = {};
  private readonly connections: ConnectionBook;
  private readonly clients: TargetClient[] = [];
  private readonly offlineMs: number;
  private fleet: ProxyFleet | undefined;
  /** Read at the start, while descriptors are still free. */
  private readonly fdLimit = openFileLimit();
  private t0 = 0;
  private stopping = false;
  /** Set by the caller's abort signal (a runner shard shutting down): stop early, report what was measured. */
  private aborted = false;
  private wakeOnAbort: () => void = () => {};
  private readonly abortedP = new Promise<void>((r) => (this.wakeOnAbort = r));
  private stopPublisher: (() => void) | undefined;
  /** Subscribe-only mode: first arrival time, whether the last seq was seen, publisher's send times. */
  private readonly heard: Listening = { firstAt: undefined, lastSeen: false };
  private readonly rawSentAt: number[] = [];

  constructor(private readonly opts: JitterOptions, private readonly url: string, private readonly events: Emitter<JitterEvents>, private readonly targetPid?: number, private readonly signal?: AbortSignal) {
    this.target = getTarget(opts.target);
    this.seed = opts.seed !== 0 ? opts.seed : randomSeed(); // 0 means "pick one", documented
    this.runId = opts.runId !== '' ? opts.runId : `${this.target.name}-${this.startedAt.getTime().toString(36)}-${this.seed}`;
    this.stream = opts.stream !== '' ? opts.stream : `jitter-${this.runId}`;
    this.kinds = parsePlan(opts.plan);
    const durations: Partial<Record<DisruptionKind, number>> = { drop: opts.jitterMs };
    if (opts.chaosMs > 0) for (const k of this.kinds) if (k !== 'drop') durations[k] = opts.chaosMs;
    this.steps = buildSchedule({ seed: this.seed, kinds: this.kinds, clients: opts.clients, groups: opts.groups, jitterSec: dropsWithin(opts) ? opts.jitter : 0, windowMs: dropWindowMs(opts), durations });
    this.ledger = new DeliveryLedger(opts.clients, opts.msgs);
    this.epochs = new EpochBook(opts.clients, opts.msgs);
    this.timelines = new ClientTimelines(opts.clients, opts.msgs, resumeProtocolOf(this.target));
    this.connections = new ConnectionBook(opts.clients);
    this.tracker = new DisruptionTracker(this.steps, opts.clients);
    this.series = new SeriesRecorder(opts.clients);
    this.lastDrop = new Array(opts.clients);
    this.manual = new ManualReconnects(opts.clients);
    this.sentAtMs = new Array(opts.msgs + 1).fill(NaN);
    this.offlineMs = offlineAfterDropMs(this.target, opts.jitterMs);
  }

  private groupOf(i: number): number {
    return i % this.opts.groups;
  }

  /** A sleep that an abort cuts short. */
  private nap(ms: number): Promise<void> {
    return Promise.race([sleep(ms), this.abortedP]);
  }

  private abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.stopping = true;
    this.stopPublisher?.();
    this.wakeOnAbort();
  }

  async execute(): Promise<JitterResult> {
    this.signal?.addEventListener('abort', () => this.abort(), { once: true });
    if (this.signal?.aborted) this.abort();
    const health = watchRunner();
    // A target this runner started: sample its memory and CPU for the report.
    const usage = this.targetPid ? watchTarget(this.targetPid) : undefined;
    try {
      if (planNeedsProxy(this.kinds)) {
        const u = new URL(this.url.replace(/^ws/, 'http'));
        this.fleet = await openProxyFleet({ apiUrl: this.opts.toxiproxyUrl, groups: this.opts.groups, upstream: `${u.hostname}:${u.port !== '' ? u.port : u.protocol === 'https:' ? 443 : 80}`, namePrefix: `rr-${this.runId}` });
      }
      for (let i = 0; i < this.opts.clients; i++) this.clients.push(this.wire(i));
      const rampStart = Date.now();
      this.series.start(rampStart);
      await this.ramp();
      await this.nap(1000);
      const pub = this.opts.subscribeOnly ? await this.listenWithChaos(health) : await this.publishWithChaos(health);
      await this.settle();
      // Close before reporting: a runner that ran out of descriptors needs them back to read its
      // own limits and write the results.
      this.closeClients();
      const targetResources = usage?.stop(this.t0) ?? undefined;
      return { ...this.report(rampStart, pub, health.stop()), ...(targetResources ? { targetResources } : {}) };
    } finally {
      usage?.stop(0);
      this.closeClients();
      await this.fleet?.close();
    }
  }

  private closeClients(): void {
    this.stopping = true;
    for (const c of this.clients) c.close();
  }

  /** Create client i and route its events into the ledger, the tracker and the counters. */
  private wire(i: number): TargetClient {
    const url = this.fleet ? this.fleet.urlFor(this.groupOf(i)) : this.url;
    const c = this.target.createClient({ index: i, url, stream: this.stream, localAddress: sourceAddress(i), reconnectStrategy: this.opts.reconnectStrategy, reconnectBaseMs: this.opts.reconnectBaseMs, reconnectRng: reconnectRng(this.seed, i) });
    c.on('message', (m) => {
      const p = readPayload(m, this.runId);
      if (!p) {
        this.counters.foreign++;
        return;
      }
      const lat = m.at - p.sentAt;
      this.epochs.arrival(i, p.seq, m.epoch, m.offset);
      if (this.ledger.record(i, p.seq, lat) === 'new') {
        this.latency.recordMs(lat);
        this.series.arrival(m.at);
        this.timelines.arrival(i, p.seq);
        if (this.opts.subscribeOnly) this.heardOf(p.seq, p.sentAt, m.at);
      }
    });
    c.on('connected', ({ resumed, attempt }) => {
      const now = Date.now();
      this.connections.connected(i);
      this.timelines.connected(i, now, resumed);
      const rec = this.tracker.onConnected(i, now, resumed);
      this.series.connectedAt(i, now, rec && { kind: this.steps[rec.step]!.kind, ms: rec.ms });
      if (attempt === 0) return;
      this.counters.reconnects++;
      if (resumed) this.counters.resumes++;
      const ev = this.lastDrop[i];
      if (ev && ev.reconnectedAtMs === undefined) {
        ev.reconnectedAtMs = now - this.t0;
        ev.resumed = resumed;
      }
    });
    c.on('disconnected', ({ reason, detail }) => {
      // Our own close at the end of the run is not a disruption being noticed.
      if (reason === 'closed' || this.stopping) return;
      this.timelines.disconnected(i, Date.now(), reason, detail);
      this.disconnectReasons[reason] = (this.disconnectReasons[reason] ?? 0) + 1;
      this.tracker.onDisconnected(i, Date.now());
      this.series.disconnectedAt(i, Date.now());
      // Manual targets reconnect only when told: losses the network caused get the same treatment as our drops.
      // The target's own floor, 0 included (ws): `||` used to turn a 0 floor into 1 s.
      if (reason !== 'dropped' && this.target.reconnect === 'manual' && !this.stopping) void this.reconnectManual(i, this.target.offlineFloorMs);
    });
    c.on('history', ({ ok, reason }) => {
      this.timelines.history(i, ok, reason);
      if (ok) return;
      this.counters.historyRejected++;
      this.epochs.historyRejected(reason);
    });
    c.on('error', () => {});
    return c;
  }

  private async ramp(): Promise<void> {
    this.events.emit('phase', 'connect', `${this.opts.clients} clients at ${this.opts.ramp}/s to ${this.target.name}${this.fleet ? ` through ${this.opts.groups} proxies` : ''}`);
    await rampConnect({ count: this.opts.clients, perSec: this.opts.ramp, connect: (i) => this.clients[i]!.connect(), book: this.connections, ...(this.signal ? { signal: this.signal } : {}) });
  }

  private async publishWithChaos(health: ReturnType<typeof watchRunner>) {
    const o = this.opts;
    this.events.emit('phase', 'publish', `${o.msgs} messages every ${o.interval} ms on ${this.stream}, plan ${o.plan} (${this.steps.length} disruptions)`);
    this.t0 = Date.now();
    this.series.publishingStarted(this.t0);
    let sent = 0;
    let published = 0;
    let failed = 0;
    const publisher = startPublisher({
      url: o.broadcastUrl ?? this.url,
      stream: this.stream,
      runId: this.runId,
      messages: o.msgs,
      intervalMs: o.interval,
      payloadBytes: o.payloadBytes,
      broadcastKey: o.broadcastKey !== '' ? o.broadcastKey : undefined,
      onSend: (seq, sentAt) => {
        sent++;
        this.sentAtMs[seq] = sentAt - this.t0;
        this.series.sent(seq, sentAt);
      },
      onPublished: (seq, ok, _cause, at) => {
        if (!ok) return void failed++;
        published++;
        this.ledger.accept(seq);
        if (at) this.epochs.accepted(seq, at);
        if (at) this.timelines.accepted(seq, at.attemptSentAt, at.answeredAt);
      },
    });
    const progress = setInterval(() => {
      // Over messages sent and not failed: a message reaches clients before its 201 comes back.
      const expected = this.connections.connectedCount * (sent - failed);
      this.events.emit('progress', {
        phase: 'publish',
        sent,
        planned: o.msgs,
        published,
        publishFailures: failed,
        connected: this.connectedNow(),
        clients: o.clients,
        deliveredPct: pct(this.latency.count, expected),
        drops: this.timeline.length,
        loopLagMs: health.recentLag(),
      });
    }, PROGRESS_EVERY_MS);
    progress.unref();
    const tasks = this.startChaos();
    this.stopPublisher = () => publisher.stop();
    if (this.aborted) publisher.stop();
    const pub = await publisher.done;
    await Promise.all(tasks);
    clearInterval(progress);
    return pub;
  }

  /** Every disruption of the schedule, each on its own timer from t0. */
  private startChaos(): Promise<void>[] {
    const tasks: Promise<void>[] = [];
    const byClient = new Map<number, number[]>();
    this.steps.forEach((s, idx) => {
      if (s.scope === 'group') tasks.push(this.runGroupStep(idx));
      else byClient.set(s.target, [...(byClient.get(s.target) ?? []), idx]);
    });
    for (const [i, idxs] of byClient) tasks.push(this.driveDrops(i, idxs));
    return tasks;
  }

  /** Subscribe-only: a message of the shared run reached one of our clients for the first time. */
  private heardOf(seq: number, sentAt: number, at: number): void {
    if (this.ledger.isAccepted(seq)) return;
    // Seen by some client: our clients are expected to get it (the coordinator re-judges this
    // against the publisher's accepted set, which is the only exact one).
    this.ledger.accept(seq);
    this.rawSentAt[seq] = sentAt;
    // No 201 seen here: the target had it by its first arrival.
    this.timelines.accepted(seq, sentAt, at);
    this.series.sent(seq, sentAt);
    this.heard.firstAt ??= at;
    if (seq === this.opts.msgs) this.heard.lastSeen = true;
  }

  /**
   * Subscribe-only: wait for the shared stream's publisher (another shard), run the chaos schedule
   * from its first message, and stop listening once its last message arrived (or the window ends).
   */
  private async listenWithChaos(health: ReturnType<typeof watchRunner>): Promise<PublisherResult> {
    const o = this.opts;
    const w = listenWindow(o);
    this.events.emit('phase', 'listen', `subscribe-only: ${this.connections.connectedCount} clients waiting for ${o.msgs} messages tagged ${this.runId} on ${this.stream}`);
    const firstBy = Date.now() + w.firstMessageMs;
    // Bounded by the deadline: one look every 50 ms.
    while (this.heard.firstAt === undefined && Date.now() < firstBy && !this.aborted) await this.nap(50);
    this.t0 = this.heard.firstAt ?? Date.now();
    this.series.publishingStarted(this.t0);
    const progress = setInterval(() => {
      const seen = this.ledger.acceptedMessages;
      const expected = this.connections.connectedCount * seen;
      this.events.emit('progress', { phase: 'listen', sent: seen, planned: o.msgs, published: seen, publishFailures: 0, connected: this.connectedNow(), clients: o.clients, deliveredPct: pct(this.latency.count, expected), drops: this.timeline.length, loopLagMs: health.recentLag() });
    }, PROGRESS_EVERY_MS);
    progress.unref();
    const tasks = this.heard.firstAt === undefined ? [] : this.startChaos();
    const lastBy = this.t0 + w.lastMessageMs;
    while (this.heard.firstAt !== undefined && !this.heard.lastSeen && Date.now() < lastBy && !this.aborted) await this.nap(100);
    await Promise.all(tasks);
    clearInterval(progress);
    for (const [seq, at] of this.rawSentAt.entries()) if (at !== undefined) this.sentAtMs[seq] = at - this.t0;
    return { published: this.ledger.acceptedMessages, failed: 0, failureCauses: {}, failures: [], elapsedMs: Date.now() - this.t0 };
  }

  /** Client-side drops for client i, in order; manual targets come back after the offline time. */
  private async driveDrops(i: number, stepIdxs: number[]): Promise<void> {
    const c = this.clients[i]!;
    for (const idx of stepIdxs) {
      const step = this.steps[idx]!;
      await this.nap(this.t0 + step.atMs - Date.now());
      if (this.stopping) return;
      const wasConnected = this.tracker.isConnected(i);
      if (wasConnected) this.tracker.begin(idx, [i], Date.now(), false);
      const dropAt = Date.now();
      const applied = wasConnected && c.drop();
      if (applied) this.timelines.disrupted(i, dropAt);
      const ev: ChaosEvent = { kind: 'drop', scope: 'client', target: i, plannedAtMs: step.atMs, atMs: Date.now() - this.t0, durationMs: step.durationMs, applied };
      this.timeline.push(ev);
      if (!applied) continue;
      this.applied.add(idx);
      this.lastDrop[i] = ev;
      if (this.target.reconnect === 'manual') await this.reconnectManual(i, this.offlineMs);
    }
  }

  /** A network disruption on one proxy group: apply, hold for its duration, lift. */
  private async runGroupStep(idx: number): Promise<void> {
    const step = this.steps[idx]!;
    const def = CATALOG[step.kind];
    await this.nap(this.t0 + step.atMs - Date.now());
    const ev: ChaosEvent = { kind: step.kind, scope: 'group', target: step.target, plannedAtMs: step.atMs, atMs: Date.now() - this.t0, durationMs: step.durationMs, applied: false };
    this.timeline.push(ev);
    if (this.stopping || !this.fleet || !def.apply) return;
    const members: number[] = [];
    for (let i = step.target; i < this.opts.clients; i += this.opts.groups) members.push(i);
    this.tracker.begin(idx, members, Date.now());
    for (const i of members) if (this.tracker.isConnected(i)) this.timelines.disrupted(i, Date.now());
    try {
      const undo = await def.apply(this.fleet.proxies[step.target]!);
      ev.applied = true;
      this.applied.add(idx);
      await this.nap(this.t0 + step.atMs + step.durationMs - Date.now());
      await undo();
      for (const i of members) this.timelines.lifted(i);
      ev.endedAtMs = Date.now() - this.t0;
    } catch (err) {
      ev.error = (err as Error).message;
    }
  }

  /** The benchmark's manual reconnect (runners/targets/reconnect.ts): offline `afterMs`, then bounded 1 s retries. */
  private reconnectManual(i: number, afterMs: number): Promise<boolean> {
    return this.manual.run(i, this.clients[i]!, afterOffline(afterMs), { done: () => this.stopping, sleep: (ms) => this.nap(ms), onFailure: () => void this.counters.reconnectFailures++ });
  }

  private connectedNow(): number {
    let n = 0;
    for (let i = 0; i < this.opts.clients; i++) n += this.tracker.isConnected(i) ? 1 : 0;
    return n;
  }

  /**
   * Wait for replays and reconnects; end early once every client ever seen connected is connected
   * again and has every accepted message (so recovery times are never cut short).
   */
  private async settle(): Promise<void> {
    this.events.emit('phase', 'settle', `up to ${this.opts.settle} ms`);
    const end = Date.now() + this.opts.settle;
    while (Date.now() < end && !this.aborted) {
      const connected = this.connections.connectedCount;
      const accepted = this.ledger.acceptedMessages;
      if (accepted > 0 && this.latency.count >= connected * accepted && this.connectedNow() >= connected) break;
      await this.nap(250);
    }
  }

  private report(rampStart: number, pub: PublisherResult, runner: RunnerHealth): JitterResult {
    const o = this.opts;
    this.events.emit('phase', 'report', 'computing');
    const totals = this.ledger.totals();
    const enc = this.latency.encode();
    const disruptions = this.kinds.map((k) => this.tracker.report(k, this.applied, this.ledger, this.sentAtMs, this.target.replays));
    const conn = this.connections.summary();
    const { connectedClients } = conn;
    // Still offline after the settle: their missing messages are "not back by the end", not loss while connected.
    const offline = this.tracker.offlineNow();
    const offlineAtEnd = { clients: offline.length, lostDeliveries: offline.reduce((n, i) => n + this.ledger.tally(i).lost, 0) };
    const loss = this.timelines.report(this.ledger, totals.lostDeliveries, this.target.replays ? this.epochs.lostToEpoch(this.ledger) : undefined);
    const partial: Omit<JitterResult, 'validity'> = {
      test: 'jitter',
      target: this.target.name,
      runId: this.runId,
      seed: this.seed,
      stream: this.stream,
      startedAt: this.startedAt.toISOString(),
      params: { ...o, seed: this.seed },
      clients: o.clients,
      connectedClients,
      connectFailures: conn.connectFailures,
      connectFailureCauses: conn.connectFailureCauses,
      lateConnects: conn.lateConnects,
      runnerOpenFileLimit: this.fdLimit ?? null,
      totalMessages: o.msgs,
      published: pub.published,
      publishFailures: pub.failed,
      publishFailureCauses: pub.failureCauses,
      publishFailureSamples: pub.failures,
      allowPublishFailures: o.allowPublishFailures,
      expectedDeliveries: totals.expectedDeliveries,
      receivedDeliveries: totals.receivedDeliveries,
      lostDeliveries: totals.lostDeliveries,
      unacceptedDeliveries: totals.unacceptedDeliveries,
      deliveryRatePct: pct(totals.receivedDeliveries, totals.expectedDeliveries),
      deliveryRateOfConnectedPct: pct(totals.receivedDeliveries, connectedClients * pub.published),
      duplicates: totals.duplicates,
      outOfOrder: totals.outOfOrder,
      foreignMessages: this.counters.foreign + totals.foreign,
      perfectClients: totals.perfectClients,
      jitterEvents: disruptions.reduce((n, d) => n + d.affectedClients, 0),
      jitterSkipped: this.timeline.length - this.applied.size,
      reconnects: this.counters.reconnects,
      reconnectFailures: this.counters.reconnectFailures,
      csrResumes: this.target.replays ? this.counters.resumes : null,
      csrResumeRatePct: this.target.replays && this.counters.reconnects ? pct(this.counters.resumes, this.counters.reconnects) : null,
      historyRejected: this.counters.historyRejected,
      brokerEpoch: this.target.replays ? this.epochs.report(this.ledger) : null,
      disconnectReasons: this.disconnectReasons,
      recoveryMs: disruptions.find((d) => d.kind === 'drop')?.recoverMs ?? { count: 0, p50: 0, p95: 0, max: 0 },
      ...summarize(enc),
      latencyHistogram: enc,
      worstClient: this.ledger.worstClient() ?? null,
      runnerPeakRssMb: runner.runnerPeakRssMb,
      runner,
      elapsedMs: Date.now() - rampStart,
      plannedMs: Math.ceil((o.clients * 1000) / o.ramp) + 1000 + Math.max(o.msgs * o.interval, scheduleEndMs(this.steps)) + o.settle,
      series: this.series.finish(Date.now(), this.ledger),
      chaos: { plan: o.plan, groups: this.fleet ? o.groups : 0, proxyApi: this.fleet?.apiUrl ?? null, offlineMs: this.offlineMs, disruptions, timeline: this.timeline },
      role: o.subscribeOnly ? 'subscriber' : 'publisher',
      acceptedSeqs: encodeRanges((s) => this.ledger.isAccepted(s), o.msgs),
      ...(o.subscribeOnly ? { arrivalsBySeq: this.ledger.arrivalsBySeq(), plannedMs: listenWindow(o).plannedMs } : {}),
      ...(this.aborted ? { aborted: true } : {}),
      // Asked for disruptions (a drop interval inside the window, any plan kind): did any happen?
      ...(dropsWithin(o) && this.kinds.length > 0 ? { disruptionWindow: { planned: this.steps.length, applied: this.applied.size, windowMs: dropWindowMs(o) } } : {}),
      offlineAtEnd,
      ...loss,
    };
    const validity = checkValidity(partial);
    if (o.subscribeOnly) {
      // What the target accepted is the publishing shard's to say: judged after the merge.
      validity.flags = validity.flags.filter((f) => !SUBSCRIBER_ONLY_CODES.includes(f.code));
      validity.valid = !validity.flags.some((f) => f.severity === 'fatal');
    }
    return { ...partial, validity };
  }
}
