import { addMaps, pct, publisherFields, type RunFields } from '../../engine/session/results.ts';
import { fileURLToPath } from 'node:url';
import { sleep, until } from '../../lib/time.ts';
import { startRedisProcess } from '../../services/common/redis-process.ts';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { EpochBook, type EpochReport } from '../../engine/measure/epoch-book.ts';
import { DeliveryLedger, type LedgerTotals } from '../../engine/measure/ledger.ts';
import { startPublisher } from '../../engine/measure/publisher.ts';
import { watchRunner } from '../../engine/measure/runner-health.ts';
import { processTreeUsage } from '../../engine/measure/target-usage.ts';
import { checkValidity, type Validity } from '../../engine/measure/validity.ts';
import { ChildLink, forkChild } from '../../engine/measure/child-link.ts';
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
 * One ledger and one epoch book in this process (arrivals come from the client processes in
 * batches), so the BROKER_EPOCH_CHANGED rule (engine/measure/epoch-book.ts) sees every client.
 */

const CLIENT_PROC = fileURLToPath(new URL('./client-proc.ts', import.meta.url));

interface GoalCheck {
  goal: string;
  measured: number | string | null;
  met: boolean;
}

export interface SickRedisResult extends Pick<RunFields, 'connectedClients' | 'connectFailures' | 'connectFailureCauses'> {
  scenario: Scenario;
  clients: number;
  client: string;
  clientProcs: number;
  nodes: number;
  redis: string;
  ratePerSec: number;
  /** ms Redis was stopped (stall) or dead (kills), as executed. */
  eventMs: number;
  publisher: { messages: number; published: number; failed: number; retried: number; failureCauses: Record<string, number>; attempts: number; answersByStatus: Record<string, number>; maxAnswerMs: number; answersOverDeadline: number; deadlineMs: number };
  /** Stall: one direct publish to node 1 (another stream) while Redis is stopped: status and answer time. */
  publishInStall?: { status: number; answeredInMs: number };
  health: Awaited<ReturnType<HealthWatcher['stop']>>;
  delivery: LedgerTotals & { deliveryRatePct: number };
  brokerEpoch: EpochReport;
  droppedBeforeKill: number;
  /** aof/empty: clients offline (closed) from 150 ms before the kill until 1.5 s after the restart. */
  awayAcrossRestart: number;
  historyRejected: Record<string, number>;
  disconnects: Record<string, number>;
  /** Flood only. */
  flood?: { messages: number; bytesEach: number; accepted: number; statuses: Record<string, number>; rssBeforeMb: number; maxRssMb: number; endRssMb: number; rssCapMb: number; history: Record<string, unknown> };
  runner: { peakRssMb: number; clientProcsPeakRssMb: number; loopLagP99Ms: number };
  goals: GoalCheck[];
  goalsMet: boolean;
  validity: Validity | null;
  elapsedMs: number;
}

/** One client process: its messages go to the group, an exit before `stop` is the group's error. */
class ClientProc extends ChildLink<ParentToClients, ClientsToParent> {
  constructor(private readonly group: ClientProcs, readonly p: number) {
    super(forkChild(CLIENT_PROC, { stdout: 'ignore' }));
  }

  protected override receive(m: ClientsToParent): void {
    this.group.onMessage(this.p, m);
  }

  protected override exited(_how: string, code: number | null): void {
    if (code !== 0 && !this.group.stopping) this.group.error ??= `client process ${this.p} exited with ${code}`;
  }
}

class ClientProcs {
  readonly procs: ClientProc[] = [];
  private readonly epochTables: string[][] = [];
  readonly rejected: Record<string, number> = {};
  disconnects: Record<string, number> = {};
  private ready = 0;
  private stopped = 0;
  connected = 0;
  failed = 0;
  failureCauses: Record<string, number> = {};
  peakRssMb = 0;
  loopLagP99Ms = 0;
  foreign = 0;
  error: string | undefined;

  constructor(n: number, private readonly ledger: DeliveryLedger, private readonly book: EpochBook) {
    for (let p = 0; p < n; p++) {
      this.epochTables.push([]);
      this.procs.push(new ClientProc(this, p));
    }
  }

  /** Every process has answered 'stop' (a later exit is expected). */
  get stopping(): boolean {
    return this.stopped >= this.procs.length;
  }

  onMessage(p: number, m: ClientsToParent): void {
    if (m.type === 'ready') {
      this.ready++;
      this.connected += m.connected;
      this.failed += m.failed;
      this.failureCauses = addMaps([this.failureCauses, m.failureCauses]);
    } else if (m.type === 'stopped') {
      this.stopped++;
      this.peakRssMb = Math.max(this.peakRssMb, m.peakRssMb);
      this.loopLagP99Ms = Math.max(this.loopLagP99Ms, m.loopLagP99Ms);
      this.foreign += m.foreign;
    } else if (m.type === 'arrivals') {
      const table = this.epochTables[p]!;
      m.epochs.forEach((e, k) => (table[m.epochBase + k] = e));
      const d = m.data;
      for (let k = 0; k + 3 < d.length; k += 4) {
        const i = d[k]!;
        const seq = d[k + 1]!;
        this.ledger.record(i, seq);
        this.book.arrival(i, seq, d[k + 3]! >= 0 ? table[d[k + 3]!] : undefined, d[k + 2]! >= 0 ? d[k + 2] : undefined);
      }
      for (const [reason, n] of Object.entries(m.rejected)) {
        this.rejected[reason || 'none'] = (this.rejected[reason || 'none'] ?? 0) + n;
        for (let k = 0; k < n; k++) this.book.historyRejected(reason || undefined);
      }
      this.disconnects = addMaps([this.disconnects, m.disconnects]);
    }
  }

  send(p: number, m: ParentToClients): void {
    this.procs[p]!.send(m);
  }

  async until(pred: () => boolean, ms: number): Promise<boolean> {
    await until(() => pred() || this.error !== undefined, ms, undefined, 50);
    return pred();
  }

  allReady = () => this.ready === this.procs.length;

  async stop(): Promise<void> {
    for (let p = 0; p < this.procs.length; p++) this.send(p, { type: 'stop' });
    await this.until(() => this.stopped === this.procs.length, 10_000);
    for (const c of this.procs) c.kill();
  }
}

/** Every node's /health every 50 ms: the transitions, relative to the event and to Redis's return. */
class HealthWatcher {
  private readonly changes: { node: number; at: number; status: number }[] = [];
  private running = true;
  private readonly loops: Promise<void>[];

  constructor(private readonly nodes: ServiceHandle[]) {
    this.loops = nodes.map((n, k) => this.loop(n, k));
  }

  private async loop(n: ServiceHandle, k: number): Promise<void> {
    let last = 200;
    while (this.running) {
      // No answer within 1 s: not healthy either.
      const status = await fetch(`${n.httpUrl}/health`, { signal: AbortSignal.timeout(1000) })
        .then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        })
        .catch(() => 0);
      if (status !== last) {
        last = status;
        this.changes.push({ node: k, at: Date.now(), status });
      }
      await sleep(50);
    }
  }

  async stop(eventAt: number, returnAt: number) {
    this.running = false;
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

/** Run one scenario; everything it started is stopped before it returns (or throws). */
export async function runScenario(s: Scenario, o: ScenarioOptions, log: (l: string) => void = () => {}): Promise<SickRedisResult> {
  if (s === 'flood') return runFlood(o, log);
  const startedAt = Date.now();
  const limit = startedAt + o.timeLimitSec * 1000;
  const health0 = watchRunner();
  const redis = await startRedisProcess({ persist: s === 'aof' });
  const nodes: ServiceHandle[] = [];
  let procs: ClientProcs | undefined;
  try {
    const eventMs = s === 'stall' ? o.stallMs : o.downMs;
    const messages = Math.max(1, Math.round(((o.beforeMs + eventMs + o.afterMs) / 1000) * o.rate));
    for (let k = 0; k < o.nodes; k++) {
      nodes.push(await startService('replay', { args: ['--broker', 'redis', '--history-limit', String(Math.max(1000, messages + 100))], env: { REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: String(o.deadlineMs) } }));
    }
    log(`${s}: redis ${redis.url}${s === 'aof' ? ' (AOF, appendfsync always)' : ' (no persistence)'}, ${o.nodes} nodes ${nodes.map((n) => n.port).join(',')}, ${o.clients} clients in ${o.clientProcs} processes`);
    const ledger = new DeliveryLedger(o.clients, messages);
    const book = new EpochBook(o.clients, messages);
    procs = new ClientProcs(Math.min(o.clientProcs, o.clients), ledger, book);
    const runId = `sick-${s}-${startedAt.toString(36)}`;
    const stream = `sick/${runId}`;
    const per = Math.ceil(o.clients / procs.procs.length);
    for (let p = 0; p < procs.procs.length; p++) {
      const first = p * per;
      procs.send(p, { type: 'start', urls: nodes.map((n) => n.httpUrl), stream, runId, first, count: Math.max(0, Math.min(per, o.clients - first)), rampPerSec: Math.max(50, Math.ceil(500 / procs.procs.length)), reconnectStrategy: 'tuned' });
    }
    await procs.until(procs.allReady, Math.max(30_000, (o.clients / 200) * 1000 + 20_000));
    if (procs.error) throw new Error(procs.error);
    log(`${s}: ${procs.connected} connected, ${procs.failed} failed`);
    await sleep(1000);

    const watcher = new HealthWatcher(nodes);
    // Every attempt's answer (retries included), in the result's publisher names.
    const answers = { attempts: 0, answersByStatus: {} as Record<string, number>, maxAnswerMs: 0, answersOverDeadline: 0 };
    const pub = startPublisher({
      url: nodes[0]!.httpUrl,
      stream,
      runId,
      messages,
      intervalMs: 1000 / o.rate,
      timeoutMs: o.publishTimeoutMs,
      onAttempt: (_seq, a) => {
        answers.attempts++;
        answers.answersByStatus[String(a.status)] = (answers.answersByStatus[String(a.status)] ?? 0) + 1;
        answers.maxAnswerMs = Math.max(answers.maxAnswerMs, a.answerMs);
        if (a.answerMs > o.deadlineMs + o.answerSlackMs) answers.answersOverDeadline++;
      },
      onPublished: (seq, ok, _cause, at, unknown) => {
        if (!ok) return void (unknown && ledger.unconfirmed(seq));
        ledger.accept(seq);
        if (at) book.accepted(seq, at);
      },
    });
    let eventAt = 0;
    let returnAt = 0;
    let dropped = 0;
    let publishInStall: SickRedisResult['publishInStall'];
    let away = 0;
    // Every k-th client from `phase` on (k >= 2, so two shares never pick the same client).
    const pick = (share: number, phase: number) => {
      const step = Math.max(2, Math.round(1 / share));
      const ids: number[] = [];
      for (let i = phase; i < o.clients; i += step) ids.push(i);
      return ids;
    };
    const sendPicked = (ids: number[], m: { type: 'drop' } | { type: 'away'; ms: number }) => {
      for (let p = 0; p < procs!.procs.length; p++) procs!.send(p, { ...m, clients: ids.filter((i) => Math.floor(i / per) === p) });
      return ids.length;
    };
    if (s !== 'stall' && (o.dropBeforeKill > 0 || o.awayAcrossRestart > 0)) {
      await sleep(o.beforeMs - 150);
      if (s === 'empty' && o.dropBeforeKill > 0) dropped = sendPicked(pick(o.dropBeforeKill, 0), { type: 'drop' });
      if (o.awayAcrossRestart > 0) {
        // Offline from before the kill until 1.5 s after the restart (the nodes have reconnected by then).
        away = sendPicked(pick(o.awayAcrossRestart, 1), { type: 'away', ms: 150 + o.downMs + 1500 });
      }
      await sleep(150);
    } else await sleep(o.beforeMs);
    if (s === 'stall') {
      redis.signal('SIGSTOP');
      eventAt = Date.now();
      log(`${s}: SIGSTOP`);
      const t0 = Date.now();
      const r = await fetch(`${nodes.at(-1)!.httpUrl}/_broadcast`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stream: `${stream}/probe`, data: '1' }), signal: AbortSignal.timeout(o.publishTimeoutMs) }).catch(() => undefined);
      publishInStall = { status: r?.status ?? 0, answeredInMs: Date.now() - t0 };
      await r?.arrayBuffer();
      await sleep(eventAt + o.stallMs - Date.now());
      redis.signal('SIGCONT');
      returnAt = Date.now();
      log(`${s}: SIGCONT after ${returnAt - eventAt} ms`);
    } else {
      eventAt = Date.now();
      await redis.stop('SIGKILL');
      log(`${s}: SIGKILL`);
      await sleep(eventAt + o.downMs - Date.now());
      await redis.start();
      returnAt = Date.now();
      log(`${s}: restarted after ${returnAt - eventAt} ms`);
    }
    const timer = setTimeout(() => pub.stop(), Math.max(0, limit - Date.now() - 20_000));
    const pr = await pub.done;
    clearTimeout(timer);
    log(`${s}: publisher ${pr.published}/${messages} accepted, ${pr.failed} failed, ${pr.retried ?? 0} retries`);
    // Settle: until every client has every accepted message, or settleMs.
    const settleEnd = Math.min(Date.now() + o.settleMs, limit - 10_000);
    await until(() => ledger.totals().lostDeliveries === 0, settleEnd - Date.now(), undefined, 250);
    const health = await watcher.stop(eventAt, returnAt);
    await procs.stop();
    const totals = ledger.totals();
    const brokerEpoch = book.report(ledger);
    const runner = health0.stop();
    const connect = { connectedClients: procs.connected, connectFailures: procs.failed, connectFailureCauses: procs.failureCauses };
    const base = {
      clients: o.clients,
      ...connect,
      totalMessages: messages,
      ...publisherFields(pr),
      // The kills make 503s while Redis is dead: expected, and never counted as loss.
      allowPublishFailures: s !== 'stall',
      expectedDeliveries: totals.expectedDeliveries,
      receivedDeliveries: totals.receivedDeliveries,
      unconfirmedDeliveries: totals.unconfirmedDeliveries,
      deliveryRatePct: pct(totals.receivedDeliveries - totals.unconfirmedDeliveries, totals.expectedDeliveries),
      deliveryRateOfConnectedPct: pct(totals.receivedDeliveries - totals.unconfirmedDeliveries, procs.connected * pr.published),
      skewFloor: 0,
      foreignMessages: procs.foreign + totals.foreign,
      elapsedMs: Date.now() - startedAt,
      plannedMs: scenarioPlannedMs(s, o),
      runner,
      brokerEpoch,
    };
    const validity = checkValidity(base);
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
    return {
      scenario: s,
      clients: o.clients,
      client: '@anycable/core (official, unmodified), tuned reconnect',
      clientProcs: procs.procs.length,
      nodes: o.nodes,
      redis: s === 'aof' ? 'redis-server, appendonly yes, appendfsync always' : 'redis-server, no persistence (save "", appendonly no)',
      ratePerSec: o.rate,
      eventMs: returnAt - eventAt,
      ...connect,
      publisher: { messages, published: pr.published, failed: pr.failed, retried: pr.retried ?? 0, failureCauses: pr.failureCauses, ...answers, deadlineMs: o.deadlineMs },
      ...(publishInStall ? { publishInStall } : {}),
      health,
      delivery: { ...totals, deliveryRatePct: base.deliveryRatePct },
      brokerEpoch,
      droppedBeforeKill: dropped,
      awayAcrossRestart: away,
      historyRejected: procs.rejected,
      disconnects: procs.disconnects,
      runner: { peakRssMb: runner.runnerPeakRssMb, clientProcsPeakRssMb: procs.peakRssMb, loopLagP99Ms: Math.max(runner.runnerLoopLagMs.p99, procs.loopLagP99Ms) },
      goals,
      goalsMet: goals.every((g) => g.met),
      validity,
      elapsedMs: Date.now() - startedAt,
    };
  } finally {
    if (procs) for (const c of procs.procs) c.kill();
    for (const n of nodes) await n.stop(2000).catch(() => {});
    await redis.close();
  }
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
      const r = await fetch(`${node.httpUrl}/_broadcast`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stream: `flood/${k}`, data }), signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
      const st = String(r?.status ?? 'no answer');
      statuses[st] = (statuses[st] ?? 0) + 1;
      await r?.arrayBuffer();
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
      delivery: { expectedDeliveries: 0, receivedDeliveries: 0, lostDeliveries: 0, unacceptedDeliveries: 0, unconfirmedDeliveries: 0, duplicates: 0, outOfOrder: 0, foreign: 0, perfectClients: 0, deliveryRatePct: 0 },
      brokerEpoch: { epochs: [], changes: [], historyRejectedEpochChanged: 0, oldEpochMessages: 0, lostDeliveries: 0, lostMessages: 0, affectedClients: 0, plainLostDeliveries: 0, lostAfterBoundaryDeliveries: 0, boundary: null },
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

