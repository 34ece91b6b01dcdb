import { fileURLToPath } from 'node:url';
import { sleep, until } from '../../lib/time.ts';
import { startRedisProcess, type RedisProcess } from '../../services/common/redis-process.ts';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { EpochBook, type EpochReport } from '../../engine/measure/epoch-book.ts';
import { DeliveryLedger, type LedgerTotals } from '../../engine/measure/ledger.ts';
import type { PublisherResult } from '../../engine/measure/publisher.ts';
import { watchRunner } from '../../engine/measure/runner-health.ts';
import { processTreeUsage } from '../../engine/measure/target-usage.ts';
import { checkValidity, type Validity } from '../../engine/measure/validity.ts';
import { assertNever, ChildLink, forkChild } from '../../engine/measure/child-link.ts';
import { publishPhase } from '../../engine/session/phases/publish.ts';
import { allDelivered, settlePhase } from '../../engine/session/phases/settle.ts';
import { addMaps, pct, publisherFields, runFields, sum, type RunFields } from '../../engine/session/results.ts';
import { RunSession } from '../../engine/session/session.ts';
import { replayRedisTarget } from '../../engine/targets/redis.ts';
import type { ClientsToParent, ParentToClients } from './messages.ts';
import type { Scenario, ScenarioOptions } from './options.ts';

/**
 * The sick-Redis runner: a real redis-server, `nodes` replay node processes on it (`--broker
 * redis`), `clients` official @anycable/core clients spread over `clientProcs` processes and over
 * the nodes, Rebound's publisher (idempotency keys, retries) at `rate` msg/s into node 0; then one
 * Redis event per scenario while every node's /health is watched every 50 ms:
 *
 * - stall: SIGSTOP for `stallMs`, then SIGCONT. Goals: /health degraded on every node within
 *   `healthGoalMs`, every publish answered within the deadline, 0 duplicates, 0 out of order, 0
 *   accepted messages lost.
 * - aof: SIGKILL, `downMs` dead, restart on its fsync-always AOF. Goal: 0 accepted lost.
 * - empty: SIGKILL, `downMs` dead, restart with no persistence (empty: a new epoch). A share of the
 *   clients is dropped just before the kill, so some are away when the data goes. Goals: 0 loss
 *   of messages accepted after Redis returned; the pre-crash loss booked as BROKER_EPOCH_CHANGED.
 * - flood: `floodMessages` broadcasts of `floodBytes` on a memory-broker node process with the
 *   default byte caps. Goal: its RSS stays under `rssCapMb`.
 *
 * Each scenario runs on one RunSession (engine/session) whose clients live in the client
 * processes, not in the session: it holds the one ledger their arrivals go to (in batches) and runs
 * the publish and settle phases. One epoch book beside it, so the BROKER_EPOCH_CHANGED rule
 * (engine/measure/epoch-book.ts) sees every client.
 */

const CLIENT_PROC = fileURLToPath(new URL('./client-proc.ts', import.meta.url));

interface GoalCheck {
  goal: string;
  measured: number | string | null;
  met: boolean;
}

/** One scenario's result: scenarioResult's fields; the flood adds its own and has no validity. */
export type SickRedisResult = Omit<ReturnType<typeof scenarioResult>, 'validity'> & {
  /** Flood only. */
  flood?: { messages: number; bytesEach: number; accepted: number; statuses: Record<string, number>; rssBeforeMb: number; maxRssMb: number; endRssMb: number; rssCapMb: number; history: Record<string, unknown> };
  validity: Validity | null;
};

/**
 * One client process holding clients first..first+count-1: its arrival batches go to the run's one
 * ledger and epoch book, its history rejections and disconnects by reason are kept here; an exit
 * before it answered `stop` is its error.
 */
class ClientProc extends ChildLink<ParentToClients, ClientsToParent> {
  ready: Extract<ClientsToParent, { type: 'ready' }> | undefined;
  stopped: Extract<ClientsToParent, { type: 'stopped' }> | undefined;
  /** By reason; 'none' when the server gave none. */
  readonly rejected: Record<string, number> = {};
  disconnects: Record<string, number> = {};
  /** This process's epoch strings by the index its batches use. */
  private readonly epochs: string[] = [];

  constructor(private readonly books: { ledger: DeliveryLedger; epochs: EpochBook }, readonly p: number, readonly first: number, readonly count: number) {
    super(forkChild(CLIENT_PROC, { stdout: 'ignore' }));
  }

  protected override receive(m: ClientsToParent): void {
    if (m.type === 'ready') this.ready = m;
    else if (m.type === 'stopped') this.stopped = m;
    else if (m.type === 'arrivals') this.arrivals(m);
    else assertNever(m);
  }

  private arrivals(m: Extract<ClientsToParent, { type: 'arrivals' }>): void {
    const { ledger, epochs } = this.books;
    m.epochs.forEach((e, k) => (this.epochs[m.epochBase + k] = e));
    const d = m.data;
    // Arrivals and rejections in the order the process saw them (a rejection after `at` arrivals).
    let r = 0;
    const rejectedUpTo = (at: number) => {
      for (; r < m.rejected.length && m.rejected[r]![1] <= at; r++) {
        const [client, , reason] = m.rejected[r]!;
        this.rejected[reason || 'none'] = (this.rejected[reason || 'none'] ?? 0) + 1;
        epochs.historyRejected(reason || undefined, client);
      }
    };
    for (let k = 0; k + 3 < d.length; k += 4) {
      rejectedUpTo(k / 4);
      const i = d[k]!;
      const seq = d[k + 1]!;
      ledger.record(i, seq);
      epochs.arrival(i, seq, d[k + 3]! >= 0 ? this.epochs[d[k + 3]!] : undefined, d[k + 2]! >= 0 ? d[k + 2] : undefined);
    }
    rejectedUpTo(Infinity);
    this.disconnects = addMaps([this.disconnects, m.disconnects]);
  }

  protected override exited(_how: string, code: number | null): void {
    if (code !== 0 && !this.stopped) this.error ??= `client process ${this.p} exited with ${code}`;
  }
}

/** Until `pred` holds for every process (one deadline for all), or one of them failed. */
async function untilAll(procs: readonly ClientProc[], pred: (p: ClientProc) => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  const failed = () => procs.some((q) => q.error !== undefined);
  for (const p of procs) if (!(await p.until(() => pred(p) || failed(), end - Date.now())) || failed()) return;
}

/** Every node's /health every 50 ms: the transitions, relative to the event and to Redis's return. */
class HealthWatcher {
  private readonly changes: { node: number; at: number; status: number }[] = [];
  private readonly stopped = new AbortController();
  private readonly loops: Promise<unknown>[];

  constructor(private readonly nodes: ServiceHandle[]) {
    this.loops = nodes.map((n, k) => {
      let last = 200;
      // Never true: it probes until stopped.
      return until(async () => {
        // No answer within 1 s: not healthy either.
        const status = await fetch(`${n.httpUrl}/health`, { signal: AbortSignal.timeout(1000) })
          .then(async (r) => {
            await r.arrayBuffer();
            return r.status;
          })
          .catch(() => 0);
        if (status !== last) this.changes.push({ node: k, at: Date.now(), status: (last = status) });
        return false;
      }, Infinity, this.stopped.signal, 50);
    });
  }

  async stop(eventAt: number, returnAt: number) {
    this.stopped.abort();
    await Promise.all(this.loops);
    const first = (k: number, after: number, ok: boolean) => {
      const c = this.changes.find((x) => x.node === k && x.at >= after && (x.status === 200) === ok);
      return c ? c.at - after : null;
    };
    return {
      /** Per node: ms from the event to its first non-200 /health (null: never degraded). */
      degradedAfterMs: this.nodes.map((_, k) => (eventAt ? first(k, eventAt, false) : null)),
      /** Per node: ms from Redis being back (SIGCONT / restart answering PING) to its first 200 again. */
      healthyAfterReturnMs: this.nodes.map((_, k) => (returnAt ? first(k, returnAt, true) : null)),
    };
  }
}

/** One scenario's plan: the module's plannedMs (summed over the scenarios) and the OVERRAN_PLAN rule's. The flood, unjudged by it, is bounded by its time limit. */
export const scenarioPlannedMs = (s: Scenario, o: ScenarioOptions) =>
  s === 'flood' ? Math.min(o.timeLimitSec * 1000, 5000 + o.floodMessages * 500) : (o.clients / 200) * 1000 + 1000 + o.beforeMs + (s === 'stall' ? o.stallMs : o.downMs) + o.afterMs + o.settleMs + 15_000;

/** Fork the client processes and deal them the clients: process p holds clients p·per .. (p+1)·per-1; client i goes to urls[i mod urls]. */
function startProcs(o: ScenarioOptions, s: RunSession, urls: string[], epochs: EpochBook): ClientProc[] {
  const n = Math.min(o.clientProcs, o.clients);
  const per = Math.ceil(o.clients / n);
  return Array.from({ length: n }, (_, p) => {
    const c = new ClientProc({ ledger: s.ledger, epochs }, p, p * per, Math.max(0, Math.min(per, o.clients - p * per)));
    c.send({ type: 'start', urls, stream: s.stream, runId: s.runId, first: c.first, count: c.count, rampPerSec: Math.max(50, Math.ceil(500 / n)), reconnectStrategy: 'tuned' });
    return c;
  });
}

/** Every publish attempt's answer (retries included), in the result's publisher names. */
type Answers = { attempts: number; answersByStatus: Record<string, number>; maxAnswerMs: number; answersOverDeadline: number };

/** What the health watcher saw: per node, its first non-200 after the event and its first 200 after Redis's return. */
type Health = Awaited<ReturnType<HealthWatcher['stop']>>;

/** What one scenario's Redis event did, and when. */
type RedisEvent = { eventAt: number; returnAt: number; dropped: number; away: number; publishInStall?: { status: number; answeredInMs: number } };

/** Run one scenario; everything it started is stopped before it returns (or throws). */
export async function runScenario(s: Scenario, o: ScenarioOptions, log: (l: string) => void = () => {}): Promise<SickRedisResult> {
  if (s === 'flood') return runFlood(o, log);
  const startedAt = Date.now();
  const limit = startedAt + o.timeLimitSec * 1000;
  const runner = watchRunner();
  const redis = await startRedisProcess({ persist: s === 'aof' });
  const nodes: ServiceHandle[] = [];
  let procs: ClientProc[] = [];
  try {
    const messages = Math.max(1, Math.round(((o.beforeMs + (s === 'stall' ? o.stallMs : o.downMs) + o.afterMs) / 1000) * o.rate));
    for (let k = 0; k < o.nodes; k++) {
      nodes.push(await startService('replay', { args: ['--broker', 'redis', '--history-limit', String(Math.max(1000, messages + 100))], env: { REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: String(o.deadlineMs) } }));
    }
    log(`${s}: redis ${redis.url}${s === 'aof' ? ' (AOF, appendfsync always)' : ' (no persistence)'}, ${o.nodes} nodes ${nodes.map((n) => n.port).join(',')}, ${o.clients} clients in ${o.clientProcs} processes`);
    const urls = nodes.map((n) => n.httpUrl);
    const runId = `sick-${s}-${startedAt.toString(36)}`;
    const session = new RunSession({ target: replayRedisTarget, urlOf: (i) => urls[i % urls.length]!, clients: o.clients, messages, runId, stream: `sick/${runId}`, seed: 0 });
    const book = new EpochBook(o.clients, messages);
    procs = startProcs(o, session, urls, book);
    await untilAll(procs, (p) => p.ready !== undefined, Math.max(30_000, (o.clients / 200) * 1000 + 20_000));
    const failed = procs.find((p) => p.error !== undefined);
    if (failed) throw new Error(failed.error);
    const ready = procs.flatMap((p) => p.ready ?? []);
    const connect = { connectedClients: sum(ready, (r) => r.connected), connectFailures: sum(ready, (r) => r.failed), connectFailureCauses: addMaps(ready.map((r) => r.failureCauses)) };
    log(`${s}: ${connect.connectedClients} connected, ${connect.connectFailures} failed`);
    await session.nap(1000);

    const watcher = new HealthWatcher(nodes);
    const answers: Answers = { attempts: 0, answersByStatus: {}, maxAnswerMs: 0, answersOverDeadline: 0 };
    let answered = 0;
    let event: Promise<RedisEvent> | undefined;
    const { result: pr } = await session.run(
      publishPhase({
        url: urls[0]!, messages, intervalMs: 1000 / o.rate, timeoutMs: o.publishTimeoutMs, progressEveryMs: 0,
        onAttempt: (_seq, a) => {
          answers.attempts++;
          answers.answersByStatus[String(a.status)] = (answers.answersByStatus[String(a.status)] ?? 0) + 1;
          answers.maxAnswerMs = Math.max(answers.maxAnswerMs, a.answerMs);
          if (a.answerMs > o.deadlineMs + o.answerSlackMs) answers.answersOverDeadline++;
        },
        // The session books each 201 into the ledger; the epoch book places it before or after the restart.
        onPublished: (seq, ok, _cause, at) => void (answered++, ok && at && book.accepted(seq, at)),
        // Until every message has its outcome; at the scenario's time limit less 20 s publishing stops, whatever is left unsent.
        stopWith: () => until(() => answered >= messages, limit - 20_000 - Date.now()),
        alongside: () => [(event = redisEvent(s, o, { session, redis, urls, procs, log }))],
      }),
    );
    const ev = await event!;
    log(`${s}: publisher ${pr.published}/${messages} accepted, ${pr.failed} failed, ${pr.retried ?? 0} retries`);
    // Settle: until every client has every accepted message, or settleMs.
    await session.run(settlePhase({ maxMs: Math.min(o.settleMs, limit - 10_000 - Date.now()), until: allDelivered(session) }));
    const health = await watcher.stop(ev.eventAt, ev.returnAt);
    procs.forEach((p) => p.send({ type: 'stop' }));
    await untilAll(procs, (p) => p.stopped !== undefined, 10_000);
    return scenarioResult({ s, o, startedAt, messages, session, book, procs, connect, pr, answers, ev, health, runner: runner.stop() });
  } finally {
    for (const c of procs) c.kill();
    for (const n of nodes) await n.stop(2000).catch(() => {});
    await redis.close();
  }
}

/**
 * The scenario's Redis event, from the publisher's start: `beforeMs` of publishing, then stall:
 * SIGSTOP for `stallMs` (one direct publish to the last node meanwhile); aof/empty: SIGKILL, `downMs`
 * dead, restart. Before a kill, shares of the clients are dropped or taken away across it.
 */
async function redisEvent(s: Scenario, o: ScenarioOptions, x: { session: RunSession; redis: RedisProcess; urls: string[]; procs: ClientProc[]; log: (l: string) => void }): Promise<RedisEvent> {
  const { session, redis, urls, procs, log } = x;
  const ev: RedisEvent = { eventAt: 0, returnAt: 0, dropped: 0, away: 0 };
  // Every k-th client from `phase` on (k >= 2, so two shares never pick the same client).
  const pick = (share: number, phase: number) => {
    const step = Math.max(2, Math.round(1 / share));
    const ids: number[] = [];
    for (let i = phase; i < o.clients; i += step) ids.push(i);
    return ids;
  };
  const sendPicked = (ids: number[], m: { type: 'drop' } | { type: 'away'; ms: number }) => {
    for (const p of procs) p.send({ ...m, clients: ids.filter((i) => i >= p.first && i < p.first + p.count) });
    return ids.length;
  };
  if (s !== 'stall' && (o.dropBeforeKill > 0 || o.awayAcrossRestart > 0)) {
    await session.nap(o.beforeMs - 150);
    if (s === 'empty' && o.dropBeforeKill > 0) ev.dropped = sendPicked(pick(o.dropBeforeKill, 0), { type: 'drop' });
    // Offline from before the kill until 1.5 s after the restart (the nodes have reconnected by then).
    if (o.awayAcrossRestart > 0) ev.away = sendPicked(pick(o.awayAcrossRestart, 1), { type: 'away', ms: 150 + o.downMs + 1500 });
    await session.nap(150);
  } else await session.nap(o.beforeMs);
  if (s === 'stall') {
    redis.signal('SIGSTOP');
    ev.eventAt = Date.now();
    log(`${s}: SIGSTOP`);
    const t0 = Date.now();
    const r = await broadcast(urls.at(-1)!, `${session.stream}/probe`, '1', o.publishTimeoutMs);
    ev.publishInStall = { status: r.status, answeredInMs: r.answeredAt - t0 };
    await session.nap(ev.eventAt + o.stallMs - Date.now());
    redis.signal('SIGCONT');
    ev.returnAt = Date.now();
    log(`${s}: SIGCONT after ${ev.returnAt - ev.eventAt} ms`);
  } else {
    ev.eventAt = Date.now();
    await redis.stop('SIGKILL');
    log(`${s}: SIGKILL`);
    await session.nap(ev.eventAt + o.downMs - Date.now());
    await redis.start();
    ev.returnAt = Date.now();
    log(`${s}: restarted after ${ev.returnAt - ev.eventAt} ms`);
  }
  return ev;
}

/** One POST to a node's /_broadcast, its body read: the status (0: no answer within `timeoutMs`) and when it came. */
async function broadcast(url: string, stream: string, data: string, timeoutMs: number): Promise<{ status: number; answeredAt: number }> {
  const r = await fetch(`${url}/_broadcast`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stream, data }), signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
  const answeredAt = Date.now();
  await r?.arrayBuffer();
  return { status: r?.status ?? 0, answeredAt };
}

/** The scenario's result from what its phases measured: the ledger's totals, the epoch book's report, the goals and the shared validity rules. */
function scenarioResult(x: { s: Scenario; o: ScenarioOptions; startedAt: number; messages: number; session: RunSession; book: EpochBook; procs: ClientProc[]; connect: Pick<RunFields, 'connectedClients' | 'connectFailures' | 'connectFailureCauses'>; pr: PublisherResult; answers: Answers; ev: RedisEvent; health: Health; runner: ReturnType<ReturnType<typeof watchRunner>['stop']> }) {
  const { s, o, startedAt, messages, session, book, procs, connect, pr, answers, ev, health, runner } = x;
  const stopped = procs.flatMap((p) => p.stopped ?? []);
  const totals = session.ledger.totals();
  const brokerEpoch = book.report(session.ledger);
  const deliveryRatePct = pct(totals.receivedDeliveries - totals.unconfirmedDeliveries, totals.expectedDeliveries);
  const validity = checkValidity({
    clients: o.clients,
    ...connect,
    totalMessages: messages,
    ...publisherFields(pr),
    // The kills make 503s while Redis is dead: expected, and never counted as loss.
    allowPublishFailures: s !== 'stall',
    expectedDeliveries: totals.expectedDeliveries,
    receivedDeliveries: totals.receivedDeliveries,
    unconfirmedDeliveries: totals.unconfirmedDeliveries,
    deliveryRatePct,
    deliveryRateOfConnectedPct: pct(totals.receivedDeliveries - totals.unconfirmedDeliveries, connect.connectedClients * pr.published),
    skewFloor: 0,
    foreignMessages: sum(stopped, (m) => m.foreign) + totals.foreign,
    ...runFields(runner, Date.now() - startedAt, scenarioPlannedMs(s, o)),
    brokerEpoch,
  });
  return {
    scenario: s,
    clients: o.clients,
    client: '@anycable/core (official, unmodified), tuned reconnect',
    clientProcs: procs.length,
    nodes: o.nodes,
    redis: s === 'aof' ? 'redis-server, appendonly yes, appendfsync always' : 'redis-server, no persistence (save "", appendonly no)',
    ratePerSec: o.rate,
    /** ms Redis was stopped (stall) or dead (kills), as executed. */
    eventMs: ev.returnAt - ev.eventAt,
    ...connect,
    publisher: { messages, published: pr.published, failed: pr.failed, retried: pr.retried ?? 0, failureCauses: pr.failureCauses, ...answers, deadlineMs: o.deadlineMs },
    /** Stall: one direct publish to node 1 (another stream) while Redis is stopped: status and answer time. */
    ...(ev.publishInStall ? { publishInStall: ev.publishInStall } : {}),
    health,
    delivery: { ...totals, deliveryRatePct },
    brokerEpoch,
    droppedBeforeKill: ev.dropped,
    /** aof/empty: clients offline (closed) from 150 ms before the kill until 1.5 s after the restart. */
    awayAcrossRestart: ev.away,
    historyRejected: addMaps(procs.map((p) => p.rejected)),
    disconnects: addMaps(procs.map((p) => p.disconnects)),
    runner: { peakRssMb: runner.runnerPeakRssMb, clientProcsPeakRssMb: Math.max(0, ...stopped.map((m) => m.peakRssMb)), loopLagP99Ms: Math.max(runner.runnerLoopLagMs.p99, ...stopped.map((m) => m.loopLagP99Ms)) },
    ...goalsOf(s, o, { totals, brokerEpoch, health, answers, pr, validity }),
    validity,
    elapsedMs: Date.now() - startedAt,
  };
}

/** The scenario's goals (module.ts logs one line each) and whether all were met. */
function goalsOf(s: Scenario, o: ScenarioOptions, r: { totals: LedgerTotals; brokerEpoch: EpochReport; health: Health; answers: Answers; pr: PublisherResult; validity: Validity }) {
  const { totals, brokerEpoch, health, answers, pr, validity } = r;
  const maxDegraded = health.degradedAfterMs.some((d) => d === null) ? null : Math.max(...(health.degradedAfterMs as number[]));
  const goals: GoalCheck[] = [];
  const goal = (g: string, measured: number | string | null, met: boolean) => goals.push({ goal: g, measured, met });
  goal('0 duplicates', totals.duplicates, totals.duplicates === 0);
  goal('0 out of order', totals.outOfOrder, totals.outOfOrder === 0);
  if (s === 'stall') {
    goal(`/health degraded on every node within ${o.healthGoalMs} ms`, maxDegraded, maxDegraded !== null && maxDegraded <= o.healthGoalMs);
    goal('0 accepted messages lost', totals.lostDeliveries, totals.lostDeliveries === 0);
    goal(`every publish answered within the ${o.deadlineMs} ms deadline (+${o.answerSlackMs} ms allowance); max answer ms`, answers.maxAnswerMs, answers.answersOverDeadline === 0 && !pr.failureCauses.TIMEOUT);
  } else if (s === 'aof') {
    goal('0 accepted messages lost', totals.lostDeliveries, totals.lostDeliveries === 0);
    goal('no epoch change (the AOF brought the data back)', brokerEpoch.changes.length, brokerEpoch.changes.length === 0 && brokerEpoch.historyRejectedEpochChanged === 0);
  } else {
    goal('0 loss of messages accepted after Redis returned (plain loss)', brokerEpoch.plainLostDeliveries, brokerEpoch.plainLostDeliveries === 0 && brokerEpoch.lostAfterBoundaryDeliveries === 0);
    goal('the epoch change seen and reported as BROKER_EPOCH_CHANGED', brokerEpoch.changes.map((c) => `${c.from} -> ${c.to}`).join(', ') || null, brokerEpoch.changes.length > 0 && validity.flags.some((f) => f.code === 'BROKER_EPOCH_CHANGED'));
  }
  return { goals, goalsMet: goals.every((g) => g.met) };
}

/** The flood on one memory-broker node process (defaults: the byte caps of docs/replay-server.md). */
async function runFlood(o: ScenarioOptions, log: (l: string) => void): Promise<SickRedisResult> {
  const startedAt = Date.now();
  const health0 = watchRunner();
  const node = await startService('replay', { args: [] });
  try {
    const rssMb = () => Math.round((processTreeUsage(node.pid)?.rssBytes ?? 0) / 1048576);
    const rssBefore = rssMb();
    let maxRss = rssBefore;
    const sampler = setInterval(() => (maxRss = Math.max(maxRss, rssMb())), 50);
    const data = 'x'.repeat(o.floodBytes);
    const statuses: Record<string, number> = {};
    const end = startedAt + o.timeLimitSec * 1000;
    for (let k = 0; k < o.floodMessages && Date.now() < end; k++) {
      const { status } = await broadcast(node.httpUrl, `flood/${k}`, data, 30_000);
      const st = status ? String(status) : 'no answer';
      statuses[st] = (statuses[st] ?? 0) + 1;
    }
    await sleep(1000);
    clearInterval(sampler);
    const accepted = statuses['201'] ?? 0;
    maxRss = Math.max(maxRss, rssMb());
    const endRss = rssMb();
    const metrics = (await (await fetch(`${node.httpUrl}/metrics`)).json()) as { broker?: Record<string, unknown> };
    const b = metrics.broker ?? {};
    const history = { historyBytes: b.historyBytes, historyMessages: b.historyMessages, historyEvictedMessages: b.historyEvictedMessages, historyEvictedBytes: b.historyEvictedBytes };
    log(`flood: ${accepted}/${o.floodMessages} accepted, RSS ${rssBefore} -> max ${maxRss} MB (cap ${o.rssCapMb})`);
    const runner = health0.stop();
    // The ledger's and the epoch book's empty figures: a flood has no clients.
    const none = new DeliveryLedger(0, 0);
    const goals: GoalCheck[] = [{ goal: `replay node RSS under ${o.rssCapMb} MB (MiB) through the flood`, measured: maxRss, met: maxRss < o.rssCapMb }];
    return {
      scenario: 'flood',
      clients: 0,
      client: 'none (HTTP publishes only)',
      clientProcs: 0,
      nodes: 1,
      redis: 'none (memory broker, default byte caps)',
      ratePerSec: 0,
      eventMs: 0,
      connectedClients: 0,
      connectFailures: 0,
      connectFailureCauses: {},
      publisher: { messages: o.floodMessages, published: accepted, failed: o.floodMessages - accepted, retried: 0, failureCauses: {}, attempts: o.floodMessages, answersByStatus: statuses, maxAnswerMs: 0, answersOverDeadline: 0, deadlineMs: 0 },
      health: { degradedAfterMs: [], healthyAfterReturnMs: [] },
      delivery: { ...none.totals(), deliveryRatePct: 0 },
      brokerEpoch: new EpochBook(0, 0).report(none),
      droppedBeforeKill: 0,
      awayAcrossRestart: 0,
      historyRejected: {},
      disconnects: {},
      flood: { messages: o.floodMessages, bytesEach: o.floodBytes, accepted, statuses, rssBeforeMb: rssBefore, maxRssMb: maxRss, endRssMb: endRss, rssCapMb: o.rssCapMb, history },
      runner: { peakRssMb: runner.runnerPeakRssMb, clientProcsPeakRssMb: 0, loopLagP99Ms: runner.runnerLoopLagMs.p99 },
      goals,
      goalsMet: goals.every((g) => g.met),
      validity: null,
      elapsedMs: Date.now() - startedAt,
    };
  } finally {
    await node.stop(2000).catch(() => {});
  }
}

