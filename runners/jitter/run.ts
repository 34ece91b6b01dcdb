import { CATALOG, parsePlan, type DisruptionKind } from '../../chaos/plans/catalog.ts';
import { ChaosExecutor, chaosPhase } from '../../engine/session/chaos-phase.ts';
import { buildSchedule } from '../../chaos/plans/schedule.ts';
import { longestSpellMs, parseWeather, planWeather } from '../../chaos/weather/population.ts';
import { WeatherBook } from './weather.ts';
import { Emitter } from '../../lib/emitter.ts';
import { EpochBook } from '../../engine/measure/epoch-book.ts';
import { encodeRanges } from '../../engine/measure/seq-ranges.ts';
import { SeriesRecorder } from '../../engine/measure/timeseries.ts';
import { watchTarget } from '../../engine/measure/target-usage.ts';
import { watchRunner, type RunnerHealth } from '../../engine/measure/runner-health.ts';
import { openFileLimit } from '../../engine/measure/runner-limits.ts';
import type { PublisherResult } from '../../engine/measure/publisher.ts';
import { checkValidity } from '../../engine/measure/validity.ts';
import { connectPhase } from '../../engine/session/phases/connect.ts';
import { listenPhase } from '../../engine/session/phases/listen.ts';
import { publishPhase } from '../../engine/session/phases/publish.ts';
import { allDelivered, settlePhase } from '../../engine/session/phases/settle.ts';
import { deliveryFields, pct, publisherFields, runFields, runIdentity } from '../../engine/session/results.ts';
import { RunSession } from '../../engine/session/session.ts';
import type { LocalNodes } from '../../engine/measure/local-nodes.ts';
import { deployRestart, restartConfigFromEnv, type RestartRecord } from '../../engine/measure/restart.ts';
import type { EngineEvents } from '../../engine/session/events.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { offlineAfterDropMs } from '../../engine/targets/reconnect.ts';
import { FIRST_MESSAGE_GRACE_MS, listenWindow, SUBSCRIBER_ONLY_CODES } from './listen.ts';
import type { JitterProgress } from './progress.ts';
import type { JitterOptions } from './options.ts';
import type { JitterResult } from './result.ts';

/** What the caller holds of the target: its process (sampled), the run's abort, and its nodes when it started it (a deploy restarts them). */
export interface JitterLocal {
  targetPid?: number;
  signal?: AbortSignal;
  nodes?: LocalNodes;
}

export interface JitterEvents {
  phase: (name: 'connect' | 'publish' | 'listen' | 'settle' | 'report', detail: string) => void;
  progress: (p: JitterProgress) => void;
}

/** The drop window: the benchmark's `duration` when given, else the publishing window. */
const dropWindowMs = (o: { duration: number; msgs: number; interval: number }) => (o.duration > 0 ? o.duration * 1000 : o.msgs * o.interval);
/** A drop interval at or above the window (the benchmark's jitter=999999 "latency mode") means no drops at all. */
const dropsWithin = (o: { jitter: number; duration: number; msgs: number; interval: number }) => o.jitter > 0 && o.jitter * 1000 < dropWindowMs(o);

/**
 * The resilience engine behind `bench:jitter` and every chaos plan, as phases over one run
 * session (engine/session): connect, publish (or listen) with the chaos executor alongside
 * (chaos/execute), settle, then report from the session's books. It never prints; presentation
 * subscribes to `events`. `url` is the running target's base URL.
 */
export function runJitter(opts: JitterOptions, url: string, local?: JitterLocal) {
  const engine = new Emitter<EngineEvents>();
  // Start on the next turn so callers can attach listeners first.
  const result = new Promise<JitterResult>((resolve, reject) => setImmediate(() => execute(opts, url, engine, local ?? {}).then(resolve, reject)));
  // `events` is the session's own emitter seen through the jitter names: its phases are the
  // jitter ones, and its progress always carries loop lag (the phases are given `loopLag`).
  // `engine` is that emitter with the engine's typed events, for subscribers that render any runner.
  return { events: engine as unknown as Emitter<JitterEvents>, engine, result };
}

async function execute(o: JitterOptions, url: string, engine: Emitter<EngineEvents>, local: JitterLocal): Promise<JitterResult> {
  const run = openRun(o, url, engine, local);
  const { s, chaos, series, usage } = run;
  const health = watchRunner();
  try {
    await chaos.openFleet(url, o.toxiproxyUrl, `rr-${run.runId}`);
    s.openClients();
    const rampStart = Date.now();
    series.start(rampStart);
    await s.run(connectPhase({ perSec: o.ramp, detail: `${o.clients} clients at ${o.ramp}/s to ${run.target.name}${chaos.fleet ? ` through ${o.groups} proxies` : ''}` }));
    await s.nap(1000);
    const { t0, pub } = await flow(run, url, health);
    // End early once every client ever seen connected is connected again and has every accepted
    // message (so recovery times are never cut short).
    const delivered = allDelivered(s);
    await s.run(settlePhase({ maxMs: o.settle, until: () => delivered() && s.upCount >= s.book.connectedCount }));
    // Close before reporting: a runner that ran out of descriptors needs them back to read its
    // own limits and write the results.
    s.close();
    const targetResources = usage?.stop(t0) ?? undefined;
    return { ...report(run, rampStart, pub, health.stop()), ...(targetResources ? { targetResources } : {}) };
  } finally {
    usage?.stop(0);
    s.close();
    await chaos.close();
  }
}

/** The run's drops and weather steps in time order, and every disruption kind they use. */
function runSchedule(o: JitterOptions, seed: number) {
  const planKinds = parsePlan(o.plan);
  const dropSteps = buildSchedule({ seed, kinds: planKinds, clients: o.clients, groups: o.groups, jitterSec: dropsWithin(o) ? o.jitter : 0, windowMs: dropWindowMs(o), durations: disruptionDurations(o, planKinds) });
  // Network weather: its own proxies (a few per condition) and their seeded time lines, beside the plan's drops.
  const shares = parseWeather(o.weather);
  const sky = shares.length > 0 ? planWeather({ shares, seed, clients: o.clients, windowMs: dropWindowMs(o), scale: o.weatherScale }) : undefined;
  const weather = sky ? new WeatherBook(sky, o.weather, o.weatherScale) : undefined;
  // A subscribe-only shard never restarts the shared target: the publishing shard does (its clients still see it).
  const skySteps = sky ? sky.steps.filter((st) => !(o.subscribeOnly && CATALOG[st.kind].serverEvent)) : [];
  const steps = sky ? [...dropSteps, ...skySteps].sort((a, b) => a.atMs - b.atMs || a.target - b.target) : dropSteps;
  const kinds = [...new Set([...planKinds, ...steps.map((st) => st.kind)])];
  return { sky, weather, steps, kinds };
}

/** The deploy's restart as the chaos executor calls it, with the records and down windows the report reads. */
function restartBook(restarter: (() => Promise<RestartRecord>) | undefined, follow: (pid: number) => void, nodes: LocalNodes | undefined) {
  const restarts: RestartRecord[] = [];
  // While the run's own restart has the target down (from the signal to listening again, and a second for answers in flight).
  const downWindows: [number, number][] = [];
  const restart = restarter && (async () => {
    // Open from the signal on: failures are counted as they are answered, while the restart runs.
    const down: [number, number] = [Date.now(), Infinity];
    downWindows.push(down);
    const r = await restarter();
    down[1] = Date.now() + 1000;
    restarts.push(r);
    const pid = nodes?.handles[0]?.pid;
    if (pid) follow(pid);
    return r;
  });
  const duringRestart = (at: number) => downWindows.some(([a, b]) => at >= a && at <= b);
  return { restart, restarts, duringRestart };
}

/** What one jitter run holds besides its session: the schedule, the books the report reads, the subscribe-only marks. */
type JitterRun = ReturnType<typeof openRun>;

/** The session, its chaos executor and the books its hooks fill; nothing connects yet. */
function openRun(o: JitterOptions, url: string, engine: Emitter<EngineEvents>, { signal, targetPid, nodes }: JitterLocal) {
  const target = getTarget(o.target);
  const { seed, runId, stream, head } = runIdentity('jitter', target.name, o);
  const { sky, weather, steps, kinds } = runSchedule(o, seed);
  const offlineMs = offlineAfterDropMs(target, o.jitterMs);
  /** Loss to a broker that came back empty, told apart from the target's (BROKER_EPOCH_CHANGED). */
  const epochs = new EpochBook(o.clients, o.msgs);
  const series = new SeriesRecorder(o.clients);
  // Subscribe-only: first arrival time, whether the last seq was seen, the publisher's send times.
  const heard = { firstAt: undefined as number | undefined, lastSeen: false, rawSentAt: [] as number[] };
  const fdLimit = openFileLimit(); // read at the start, while descriptors are still free
  const { restart, restarts, duringRestart } = restartBook(deployRestart({ target: target.name, runId, url, nodes, config: restartConfigFromEnv() }), (pid) => usage?.follow(pid), nodes);
  // The chaos executor needs the session and the session's client URLs need the executor's proxies: the fleet opens first.
  let chaos: ChaosExecutor | undefined;
  const s: RunSession = new RunSession({
    target,
    urlOf: (i) => chaos!.urlFor(i, url),
    clients: o.clients,
    messages: o.msgs,
    runId,
    stream,
    seed,
    events: engine,
    ...(signal ? { signal } : {}),
    clientOptions: { reconnectStrategy: o.reconnectStrategy, reconnectBaseMs: o.reconnectBaseMs },
    hooks: {
      delivery: (d) => {
        epochs.arrival(d.client, d.seq, d.message.epoch, d.message.offset);
        if (!d.fresh) return;
        weather?.arrival(d.client, d.latencyMs);
        series.arrival(d.message.at);
        if (o.subscribeOnly) heardOf(d.seq, d.sentAt, d.message.at);
      },
      connected: (i, { resumed, attempt, at }) => series.connectedAt(i, at, chaos!.onConnected(i, at, resumed, attempt)),
      disconnected: (i, { reason, at }) => {
        chaos!.onDisconnected(i, at, reason);
        series.disconnectedAt(i, at);
      },
      history: (i, { ok, reason }) => void (ok || epochs.historyRejected(reason, i)),
    },
  });

  /** Subscribe-only: a message of the shared run reached one of our clients for the first time. */
  function heardOf(seq: number, sentAt: number, at: number): void {
    if (s.ledger.isAccepted(seq)) return;
    // Seen by some client: our clients are expected to get it (the coordinator re-judges this
    // against the publisher's accepted set, which is the only exact one). No 201 seen here: the
    // target had it by its first arrival.
    s.accept(seq, { sentAt, answeredAt: at });
    heard.rawSentAt[seq] = sentAt;
    series.sent(seq, sentAt);
    heard.firstAt ??= at;
    if (seq === o.msgs) heard.lastSeen = true;
  }

  chaos = new ChaosExecutor(s, { steps, kinds, clients: o.clients, groups: sky ? sky.groupCondition.length : o.groups, offlineMs, ...(sky ? { groupOf: sky.groupOf } : {}), ...(restart ? { restart } : {}) });
  // sentAtMs: each seq's send, ms after t0.
  // A target this runner started: sample its memory and CPU for the report (a deploy's restart
  // moves the sampler to the new process). Started last, once nothing here can refuse the run.
  const usage = targetPid ? watchTarget(targetPid) : undefined;
  return { o, target, runId, head, kinds, steps, offlineMs, epochs, series, sentAtMs: new Array<number>(o.msgs + 1).fill(NaN), heard, fdLimit, s, chaos, weather, usage, restarts, duringRestart, failedInRestart: { n: 0 } };
}

/** Publish (or, subscribe-only, listen to another shard's publisher) with the chaos phase alongside. */
async function flow({ o, s, chaos, series, sentAtMs, heard, epochs, steps, duringRestart, failedInRestart }: JitterRun, url: string, health: ReturnType<typeof watchRunner>): Promise<{ t0: number; pub: PublisherResult }> {
  const common = { drops: () => chaos.timeline.length, loopLag: () => health.recentLag(), alongside: (t0: number) => [s.run(chaosPhase(chaos, t0))] };
  if (o.subscribeOnly) {
    const w = listenWindow(o);
    const l = await s.run(listenPhase({ ...common, firstMessageMs: w.firstMessageMs, lastMessageMs: w.lastMessageMs, firstAt: () => heard.firstAt, lastSeen: () => heard.lastSeen, planned: o.msgs }));
    series.publishingStarted(l.t0);
    for (const [seq, at] of heard.rawSentAt.entries()) if (at !== undefined) sentAtMs[seq] = at - l.t0;
    return { t0: l.t0, pub: { published: s.ledger.acceptedMessages, failed: 0, failureCauses: {}, failures: [], elapsedMs: l.elapsedMs } };
  }
  let t0 = 0;
  const p = await s.run(
    publishPhase({
      ...common,
      url: o.broadcastUrl ?? url,
      messages: o.msgs,
      intervalMs: o.interval,
      payloadBytes: o.payloadBytes,
      broadcastKey: o.broadcastKey !== '' ? o.broadcastKey : undefined,
      detail: `${o.msgs} messages every ${o.interval} ms on ${s.stream}, plan ${o.plan} (${steps.length} disruptions)`,
      onStart: (at) => {
        t0 = at;
        series.publishingStarted(at);
      },
      onSend: (seq, sentAt) => {
        sentAtMs[seq] = sentAt - t0;
        series.sent(seq, sentAt);
      },
      onPublished: (seq, ok, _cause, at) => {
        if (ok && at) epochs.accepted(seq, at);
        // A failure is reported as it is answered.
        if (!ok && duringRestart(Date.now())) failedInRestart.n++;
      },
    }),
  );
  return { t0, pub: p.result };
}

function report({ o, target, head, kinds, steps, offlineMs, epochs, series, sentAtMs, fdLimit, s, chaos: ex, weather, restarts, failedInRestart }: JitterRun, rampStart: number, pub: PublisherResult, runner: RunnerHealth): JitterResult {
  s.events.emit('phase', 'report', 'computing');
  const disruptions = kinds.map((k) => ex.tracker.report(k, ex.applied, s.ledger, sentAtMs, target.replays));
  // Still offline after the settle, whatever took them down (a disruption, the server): their
  // missing messages are "not back by the end", not loss while connected.
  const offline = Array.from({ length: o.clients }, (_, i) => i).filter((i) => s.book.has(i) && !s.up[i]);
  const c = s.counters;
  const partial: Omit<JitterResult, 'validity'> = {
    ...head,
    ...deliveryFields(s, pub.published),
    runnerOpenFileLimit: fdLimit ?? null,
    totalMessages: o.msgs,
    ...publisherFields(pub),
    allowPublishFailures: o.allowPublishFailures,
    jitterEvents: disruptions.reduce((n, x) => n + x.affectedClients, 0),
    jitterSkipped: ex.timeline.length - ex.applied.size,
    reconnects: c.reconnects,
    reconnectFailures: c.reconnectFailures,
    csrResumes: target.replays ? c.resumes : null,
    csrResumeRatePct: target.replays && c.reconnects ? pct(c.resumes, c.reconnects) : null,
    historyRejected: c.historyRejected,
    brokerEpoch: target.replays ? epochs.report(s.ledger) : null,
    disconnectReasons: s.disconnectReasons,
    recoveryMs: disruptions.find((x) => x.kind === 'drop')?.recoverMs ?? { count: 0, p50: 0, p95: 0, max: 0 },
    worstClient: s.ledger.worstClient() ?? null,
    ...runFields(runner, Date.now() - rampStart, jitterPlannedMs(o)),
    series: series.finish(Date.now(), s.ledger),
    chaos: { plan: o.plan, groups: ex.fleet ? ex.o.groups : 0, proxyApi: ex.fleet?.apiUrl ?? null, offlineMs, disruptions, timeline: ex.timeline },
    role: o.subscribeOnly ? 'subscriber' : 'publisher',
    acceptedSeqs: encodeRanges((seq) => s.ledger.isAccepted(seq), o.msgs),
    ...(o.subscribeOnly ? { arrivalsBySeq: s.ledger.arrivalsBySeq() } : {}),
    ...(s.aborted ? { aborted: true } : {}),
    // Asked for disruptions (a drop interval inside the window, any plan kind): did any happen?
    ...(dropsWithin(o) && kinds.length > 0 ? { disruptionWindow: { planned: steps.length, applied: ex.applied.size, windowMs: dropWindowMs(o) } } : {}),
    offlineAtEnd: { clients: offline.length, lostDeliveries: offline.reduce((n, i) => n + s.ledger.tally(i).lost, 0) },
    ...s.lossReport(target.replays ? epochs.lostToEpoch(s.ledger) : undefined),
    ...(restarts.length ? { publishFailuresDuringRestarts: failedInRestart.n } : {}),
    ...(restarts.some((r) => !r.ok) ? { restartFailures: restarts.flatMap((r) => (r.ok ? [] : [r.error ?? 'no reason given'])) } : {}),
    ...(weather ? { weather: weather.report(s, ex.tracker, kinds, steps, ex.applied, sentAtMs, target.replays, target.replays ? epochs.lostToEpoch(s.ledger) : undefined) } : {}),
  };
  const validity = checkValidity(partial);
  if (o.subscribeOnly) {
    // What the target accepted is the publishing shard's to say: judged after the merge.
    validity.flags = validity.flags.filter((f) => !SUBSCRIBER_ONLY_CODES.includes(f.code));
    validity.valid = !validity.flags.some((f) => f.severity === 'fatal');
  }
  return { ...partial, validity };
}

/**
 * The run's one plan: the module's plannedMs (ETA, Retry-After) and the OVERRAN_PLAN rule's. From
 * the options alone, before the seed is drawn: a disruption may start as the drop window closes
 * and lasts its kind's duration (buildSchedule's).
 */
export function jitterPlannedMs(o: JitterOptions): number {
  if (o.subscribeOnly) return listenWindow(o).plannedMs + FIRST_MESSAGE_GRACE_MS;
  const kinds = parsePlan(o.plan);
  const durations = disruptionDurations(o, kinds);
  // A kind without a duration from the options lasts its catalog default, as buildSchedule does; a weather spell its condition's longest.
  const longestMs = Math.max(0, longestSpellMs(parseWeather(o.weather), o.weatherScale), ...kinds.map((k) => durations[k] ?? CATALOG[k].defaultDurationMs));
  const lastEndMs = dropWindowMs(o) + (dropsWithin(o) || o.weather !== '' ? longestMs : 0);
  return Math.ceil((o.clients * 1000) / o.ramp) + 1000 + Math.max(o.msgs * o.interval, lastEndMs) + o.settle + 5000;
}

/** How long each disruption kind lasts, from the options: a drop is jitterMs, the others chaosMs when set. */
function disruptionDurations(o: JitterOptions, kinds: readonly DisruptionKind[]): Partial<Record<DisruptionKind, number>> {
  const durations: Partial<Record<DisruptionKind, number>> = { drop: o.jitterMs };
  if (o.chaosMs > 0) for (const k of kinds) if (k !== 'drop') durations[k] = o.chaosMs;
  return durations;
}
