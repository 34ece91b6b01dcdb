import type { OptionTable, OptionValues } from '../../../lib/options.ts';
import { ReboundError } from '../../../lib/errors.ts';
import { sleep } from '../../../lib/time.ts';
import { addTotals, DeliveryLedger } from '../../../engine/measure/ledger.ts';
import { LatencyRecorder, summarize } from '../../../engine/measure/latency.ts';
import { startPublisher, type PublisherResult } from '../../../engine/measure/publisher.ts';
import { untilPort } from '../../../engine/measure/port-probe.ts';
import { openFileLimit } from '../../../engine/measure/runner-limits.ts';
import { runShellCommand, type ShellCommandResult } from '../../../engine/measure/shell-command.ts';
import { barChart } from '../../../engine/pages/charts/bars.ts';
import { addMaps } from '../../../engine/session/results.ts';
import { leanClientFor } from '../../../engine/targets/index.ts';
import { invalidOption } from '../lists.ts';
import { emptyResult, finishValidity } from '../result.ts';
import type { WorkerTally } from '../../idle/messages.ts';
import { clientsPerWorker } from '../../idle/options.ts';
import { IdleWorker } from '../../idle/workers.ts';
import { instanceParams, withInstance } from '../target.ts';
import { defineScenario } from '../scenario.ts';
import type { ScenarioModule, ScenarioResult } from '../types.ts';

/**
 * S6, graceful stop under load (seeds/000 Table 6): `s6Connections` subscribed connections over
 * holder processes, a steady publisher on `s6Streams` streams, then SIGTERM to the target while
 * it delivers. Measured: SIGTERM → exit, the exit status, deliveries during the stop (from the
 * one DeliveryLedger), and what each client was told as the server went away.
 */
const TABLE = {
  connections: { type: 'int', default: 10_000, min: 1, max: 200_000, doc: 'S6: subscribed connections held when the stop comes' },
  ramp: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'S6: connects per second over all holder processes' },
  streams: { type: 'int', default: 10, min: 1, max: 1000, doc: 'S6: streams the connections are dealt over, one publisher each' },
  intervalMs: { type: 'int', default: 1000, min: 10, max: 60_000, doc: 'S6: each stream gets one message per this many ms' },
  preStopSec: { type: 'number', default: 5, min: 0, max: 600, doc: 'S6: seconds of steady publishing before SIGTERM' },
  graceMs: { type: 'int', default: 20_000, min: 100, max: 120_000, doc: 'S6: SIGKILL after this long (the seed\'s TimeoutStopSec=20)' },
  maxStopMs: { type: 'int', default: 5000, min: 1, max: 120_000, doc: 'S6: the budget: a stop passes within this and with exit status 0' },
  connectTimeoutMs: { type: 'int', default: 20_000, min: 100, max: 600_000, doc: 'S6: per-connection time to subscribe' },
} as const satisfies OptionTable;

export type S6Options = OptionValues<typeof TABLE>;

/**
 * The operator's command that stops an external (`--url`) target, e.g. `systemctl stop app`: from
 * the runner's environment only, never an option, so no request can name a command to run.
 */
export const STOP_COMMAND_ENV = 'CAPACITY_S6_STOP_COMMAND';

/** How often the listener of an external target is probed after its stop command. */
const REFUSE_PROBE_MS = 50;

/** A stop as measured: to the process's exit (a local target) or to its listener refusing connects (an external one, whose exit the runner cannot see). */
interface StopMeasure {
  stopMs: number;
  stopEnd: 'process exit' | 'listener refused connections';
  /** False when an external target's listener still accepted connects `graceMs` after its stop command. */
  stopSeen: boolean;
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  command: ShellCommandResult | null;
}

/** Run the operator's stop command and probe the target's port meanwhile; both bounded by graceMs. */
async function externalStop(url: string, command: string, o: S6Options, env: Record<string, string>, signal: AbortSignal): Promise<StopMeasure> {
  const from = Date.now();
  const [cmd, refusedAt] = await Promise.all([runShellCommand(command, { env, timeoutMs: o.graceMs }), untilPort(url, 'refused', { intervalMs: REFUSE_PROBE_MS, timeoutMs: o.graceMs, signal })]);
  return { stopMs: refusedAt === null ? o.graceMs : Math.max(0, refusedAt - from), stopEnd: 'listener refused connections', stopSeen: refusedAt !== null, exitCode: null, exitSignal: null, command: cmd };
}


/** Arrivals from the holders in one DeliveryLedger per stream, and which came during the stop (SIGTERM to exit) and after the exit. */
class StopBook {
  readonly ledgers: DeliveryLedger[];
  readonly latency = new LatencyRecorder();
  /** Messages each stream's publisher may send: the whole run at its interval, with room. */
  readonly maxMsgs: number;
  /** SIGTERM to exit, on the runner's clock (to: +Infinity until the target exited). */
  window: { from: number; to: number } | undefined;
  duringStop = 0;
  afterExit = 0;
  acceptedDuringStop = 0;

  constructor(private readonly o: S6Options) {
    // Client i is client ⌊i/S⌋ of stream i % S: one ledger per stream (its clients × its messages).
    const perStream = (k: number) => Math.floor((o.connections - k - 1) / o.streams) + 1;
    this.maxMsgs = Math.ceil(((o.preStopSec + o.graceMs / 1000 + 10) * 1000) / o.intervalMs) + 10;
    this.ledgers = Array.from({ length: o.streams }, (_, k) => new DeliveryLedger(perStream(k), this.maxMsgs));
  }

  /** A holder's arrival rows, four numbers each: client, seq, latency ms, arrival time. */
  readonly onArrivals = (rows: number[]): void => {
    const S = this.o.streams;
    for (let j = 0; j + 3 < rows.length; j += 4) {
      const i = rows[j]!;
      const at = rows[j + 3]!;
      const got = this.ledgers[i % S]!.record(Math.floor(i / S), rows[j + 1]!, rows[j + 2]!);
      if (got === 'new') this.latency.recordMs(rows[j + 2]!);
      if (this.window && at >= this.window.from) {
        if (at <= this.window.to) this.duringStop++;
        else this.afterExit++;
      }
    }
  };

  /** Stream k's publisher got seq accepted. */
  accepted(k: number, seq: number): void {
    this.ledgers[k]!.accept(seq);
    if (this.window && Date.now() >= this.window.from) this.acceptedDuringStop++;
  }
}

/** The one step S6 reports: the stop against its budget, what clients were told, the deliveries around it, and its validity flags. */
function stopStep(r: ScenarioResult, o: S6Options, book: StopBook, m: StopMeasure & { subscribed: number; done: WorkerTally[]; ramped: WorkerTally[]; published: PublisherResult[]; holders: number }): void {
  const { subscribed, stopMs, exitCode, exitSignal, done, command } = m;
  const told = addMaps(done.map((t) => t.told));
  const toldGoodbye = Object.entries(told).filter(([k]) => !k.startsWith('nothing')).reduce((a, [, v]) => a + v, 0);
  const ledger = addTotals(book.ledgers.map((l) => l.totals()));
  const enc = book.latency.encode();
  const failureCauses = addMaps(m.ramped.map((t) => t.failureCauses));
  const commandFailed = command !== null && command.exitCode !== 0;
  // An external target's exit status is not the runner's to see: its stop passes on time alone.
  const exitOk = command !== null || exitCode === 0;
  const pass = m.stopSeen && !commandFailed && stopMs <= o.maxStopMs && exitOk;
  const commandWhy = commandFailed ? (command.signal === 'SIGKILL' && command.durationMs >= o.graceMs ? `timed out after ${o.graceMs} ms` : `exit ${command.exitCode ?? command.signal}`) : '';
  const reason = commandFailed
    ? `the stop command failed (${commandWhy})`
    : !m.stopSeen
      ? `the listener still accepted connections ${o.graceMs} ms after the stop command`
      : !exitOk
        ? `exit status ${exitCode ?? `signal ${exitSignal}`}`
        : `stop took ${stopMs} ms, over ${o.maxStopMs} ms`;
  const goodbyeLabel = Object.entries(told).sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'nothing';
  r.steps.push({
    step: { connections: o.connections },
    pass,
    ...(pass ? {} : { reason }),
    metrics: {
      subscribed,
      stopMs,
      stopEnd: m.stopEnd,
      exitCode,
      exitSignal,
      told: JSON.stringify(told),
      mostTold: goodbyeLabel,
      toldGoodbye,
      toldGoodbyePct: subscribed ? Math.round((toldGoodbye / subscribed) * 1000) / 10 : null,
      deliveriesDuringStop: book.duringStop,
      deliveriesAfterExit: book.afterExit,
      acceptedDuringStop: book.acceptedDuringStop,
      published: m.published.reduce((a, p) => a + p.published, 0),
      publishFailed: m.published.reduce((a, p) => a + p.failed, 0),
      lostDeliveries: ledger.lostDeliveries,
      duplicates: ledger.duplicates,
      holderProcesses: m.holders,
    },
    ledger,
    latency: summarize(enc),
    latencyEncoded: enc,
  });
  r.headline.value = stopMs;
  r.failureMode = pass ? 'none' : r.steps[0]!.reason!;
  if (subscribed < o.connections * 0.99) r.validity.flags.push({ code: 'CONNECT_FAILURES', severity: 'warning', message: `only ${subscribed} of ${o.connections} subscribed before the stop (${JSON.stringify(failureCauses)})` });
  if ((failureCauses.fd_limit ?? 0) + (failureCauses.port_exhaustion ?? 0) > 0) r.validity.flags.push({ code: 'RIG_LIMIT', severity: 'fatal', message: `connects failed on the runner's own limits: ${JSON.stringify(failureCauses)}` });
  const lag = Math.max(0, ...done.map((t) => t.loopLagP99Ms));
  if (lag > 50) r.validity.flags.push({ code: 'RUNNER_LOOP_LAG', severity: 'warning', message: `a holder's event loop lagged (p99 ${lag} ms): arrival times include the runner's delay` });
  if (command) r.validity.flags.push({ code: 'STOP_EXIT_UNKNOWN', severity: 'warning', message: `external target stopped by ${STOP_COMMAND_ENV}: its exit status is not visible to the runner (exitCode null); stopMs runs from the command's start to the target's listener refusing a TCP connect (probed every ${REFUSE_PROBE_MS} ms)` });
  if (commandFailed) r.validity.flags.push({ code: 'STOP_COMMAND_FAILED', severity: 'fatal', message: `${STOP_COMMAND_ENV} failed (${commandWhy}), not the target: ${command.outputTail.trim().slice(-300) || '(no output)'}` });
  if (ledger.expectedDeliveries === 0) r.validity.flags.push({ code: 'NOTHING_PUBLISHED', severity: 'warning', message: 'no message was accepted before the stop: deliveries during the stop say nothing' });
}

export const scenario: ScenarioModule<S6Options> = defineScenario({
  id: 'S6',
  title: 'S6 graceful stop under load',
  prefix: 's6',
  table: TABLE,
  typed(v) {
    if (v.streams > v.connections) throw invalidOption('s6Streams', `s6Streams (${v.streams}) exceeds s6Connections (${v.connections})`);
    if (v.maxStopMs > v.graceMs) throw invalidOption('s6MaxStopMs', `s6MaxStopMs (${v.maxStopMs}) exceeds s6GraceMs (${v.graceMs}): the budget could never be missed by a stop that needs SIGKILL`);
    return v;
  },
  plannedSec: (o) => o.connections / o.ramp + o.preStopSec + 15,
  async run(ctx, o) {
    const r = emptyResult(ctx, 'S6', scenario.title, instanceParams(ctx, { ...o }), { name: 'SIGTERM to exit under load', value: null, unit: 'ms', higherIsBetter: false });
    const stopCommand = ctx.url ? process.env[STOP_COMMAND_ENV]?.trim() || undefined : undefined;
    if (ctx.url && !stopCommand) {
      r.failureMode = `not run: an external target cannot be stopped by the runner unless its environment sets ${STOP_COMMAND_ENV} (a shell command that stops the target)`;
      r.validity.flags.push({ code: 'NOT_RUN', severity: 'warning', message: r.failureMode });
      return finishValidity(r);
    }
    if (!leanClientFor(ctx.target.name)) throw new ReboundError('RR_ERR_TARGET_UNSUPPORTED', `S6 has no lean client for target "${ctx.target.name}"`, { details: { target: ctx.target.name } });
    const perHolder = clientsPerWorker(openFileLimit() ?? 20_000);
    const nHolders = Math.max(1, Math.ceil(o.connections / perHolder));
    const runId = `s6-${ctx.seed}-${Date.now().toString(36)}`;
    const book = new StopBook(o);
    await withInstance(ctx, {}, async (inst) => {
      const holders = Array.from({ length: nHolders }, (_, id) => new IdleWorker(id, { onArrivals: book.onArrivals }));
      try {
        for (const h of holders) if (!(await h.until(() => h.ready !== undefined, 30_000, ctx.signal))) throw new ReboundError('RR_ERR_RUNNER_WORKER', h.error ?? `S6 holder ${h.id} did not start`);
        const startAt = Date.now() + 200;
        holders.forEach((h, id) =>
          h.send({ type: 'start', target: ctx.target.name, url: inst.url, stream: `capacity-s6-${runId}`, streams: o.streams, runId, first: id, stride: nHolders, count: Math.floor(o.connections / nHolders) + (id < o.connections % nHolders ? 1 : 0), rampPerSec: o.ramp, startAt, addresses: 200, connectTimeoutMs: o.connectTimeoutMs }),
        );
        const rampBudget = (o.connections * 1000) / o.ramp + o.connectTimeoutMs + 60_000;
        for (const h of holders) if (!(await h.until(() => h.tally.ramped !== undefined, rampBudget, ctx.signal))) break;
        const failed = holders.find((h) => h.error);
        if (failed) throw new ReboundError('RR_ERR_RUNNER_WORKER', failed.error!);
        const ramped = holders.map((h) => h.tally.ramped).filter((x): x is WorkerTally => x !== undefined);
        const subscribed = ramped.reduce((a, t) => a + t.subscribed, 0);
        ctx.log(`S6 ${ctx.target.name}: ${subscribed} of ${o.connections} subscribed over ${nHolders} holder process(es); publishing ${o.preStopSec} s before SIGTERM`);
        ctx.progress({ phase: 'publishing', subscribed });
        const pubs = book.ledgers.map((_, k) =>
          startPublisher({
            url: inst.url,
            stream: `capacity-s6-${runId}/${k}`,
            runId: `${runId}/${k}`,
            messages: book.maxMsgs,
            intervalMs: o.intervalMs,
            timeoutMs: 3000,
            ...(ctx.target.publish ? { publish: ctx.target.publish } : {}),
            onPublished: (seq, ok) => void (ok && book.accepted(k, seq)),
          }),
        );
        await sleep(o.preStopSec * 1000);
        const h = inst.handle;
        const from = Date.now();
        book.window = { from, to: Number.POSITIVE_INFINITY };
        ctx.progress({ phase: 'stopping', subscribed });
        const stop: StopMeasure = h
          ? { stopMs: await h.stop(o.graceMs), stopEnd: 'process exit', stopSeen: true, exitCode: h.child.exitCode, exitSignal: h.child.signalCode, command: null }
          : await externalStop(inst.url, stopCommand!, o, { REBOUND_TARGET: ctx.target.name, REBOUND_TARGET_URLS: inst.url, REBOUND_RUN_ID: runId }, ctx.signal);
        book.window.to = from + stop.stopMs;
        await sleep(1000);
        for (const p of pubs) p.stop();
        const published: PublisherResult[] = await Promise.all(pubs.map((p) => p.done));
        for (const x of holders) x.send({ type: 'stop' });
        for (const x of holders) await x.until(() => x.tally.done !== undefined, 15_000);
        const done = holders.map((x) => x.tally.done ?? x.tally.ramped).filter((x): x is WorkerTally => x !== undefined);
        stopStep(r, o, book, { ...stop, subscribed, done, ramped, published, holders: nHolders });
      } finally {
        for (const x of holders) x.kill();
      }
    });
    r.notShown.push('deliveries during the stop are arrivals between SIGTERM and the exit (an external target: between its stop command and its listener refusing connects); a target that keeps accepting broadcasts while stopping shows them as lost after it exits, since no client reconnects here', 'one stop at one load: a stop at higher connection counts can take longer (seeds/000 saw SIGKILLs at 20,000+)');
    return finishValidity(r);
  },
  sections(results: readonly ScenarioResult[]) {
    const items = results.filter((r) => r.steps[0]).map((r) => ({ label: r.target, value: Number(r.steps[0]!.metrics.stopMs ?? 0) }));
    const budget = Number((results[0]?.params as { maxStopMs?: number } | undefined)?.maxStopMs ?? 5000);
    const chart = items.length ? barChart({ id: 's6-stop', title: 'SIGTERM to exit under load', note: `Lower is better; the budget is ${budget} ms with exit status 0.`, yLabel: 'ms', items }) : null;
    if (chart) Object.assign(chart, { hlines: [{ y: budget, label: `budget ${budget} ms`, color: '#c62828' }], yRange: [0, Math.max(chart.yRange?.[1] ?? 0, budget * 1.1)] });
    return [{ title: 'S6 graceful stop under load', intro: results.map((r) => `${r.target}: ${r.steps[0] ? `${r.steps[0].metrics.stopMs} ms, exit ${r.steps[0].metrics.exitCode ?? r.steps[0].metrics.exitSignal ?? 'unknown'}, told ${r.steps[0].metrics.told}` : (r.failureMode ?? 'not run')}`).join('; '), charts: chart ? [chart] : [], ...(chart ? {} : { omitted: ['no stop was measured'] }) }];
  },
});
