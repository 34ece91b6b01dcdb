import { randomSeed } from '../../../lib/rng.ts';
import { LatencyRecorder, summarize, type LatencyReport } from '../../../engine/measure/latency.ts';
import { withTarget } from '../../../engine/measure/local-target.ts';
import { watchRunner, type RunnerHealth } from '../../../engine/measure/runner-health.ts';
import { watchTarget, type TargetUsage } from '../../../engine/measure/target-usage.ts';
import type { PublisherResult } from '../../../engine/measure/publisher.ts';
import { checkValidity } from '../../../engine/measure/validity.ts';
import { connectPhase } from '../../../engine/session/phases/connect.ts';
import { publishPhase } from '../../../engine/session/phases/publish.ts';
import { allDelivered, settlePhase } from '../../../engine/session/phases/settle.ts';
import { logLines } from '../../../engine/session/present.ts';
import { deliveryFields, pct, publisherFields, runFields, type LossSummary } from '../../../engine/session/results.ts';
import { RunSession } from '../../../engine/session/session.ts';
import { pickClient } from '../../../engine/targets/index.ts';
import { afterOffline } from '../../../engine/targets/reconnect.ts';
import type { ScenarioContext, ScenarioResult } from '../types.ts';
import type { SoakOptions } from './options.ts';
import { judgeSoak, r2, type HealthSample, type SoakJudgement } from './rules.ts';

/**
 * What the soak keeps in ScenarioResult.detail: the health series the report draws and the rules
 * judged, and why every lost delivery was lost and how every reconnect resumed (the jitter result's fields).
 */
export interface SoakDetail extends LossSummary, Pick<SoakOptions, 'durationSec' | 'sampleSec' | 'warmupSec' | 'clients' | 'rate'> {
  kind: 'soak';
  clientKind: string;
  /** Where target RSS came from: the service's process tree (/proc), its /metrics, or nowhere. */
  rssSource: 'proc' | 'metrics' | 'none';
  series: HealthSample[];
  judgement: SoakJudgement;
  runner: RunnerHealth;
}

/** Reconnect attempts the runner makes per client over a soak: a bound, whatever the target does. */
const MAX_RECONNECTS_PER_CLIENT = 20;

/** The soak's one plan: the module's plannedMs and the OVERRAN_PLAN rule's. */
export const soakPlannedMs = (o: SoakOptions) => Math.ceil((o.clients * 1000) / o.ramp) + 1000 + o.durationSec * 1000 + o.drainSec * 1000;

/** RSS and CPU from a target's own /metrics (services/common/http-app.ts): for targets this runner did not start. */
async function metricsSample(url: string): Promise<{ rssMb: number; cpuPct: number | null } | null> {
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return null;
    const m = (await res.json()) as { rssBytes?: unknown; cpuPct?: unknown };
    if (typeof m.rssBytes !== 'number') return null;
    return { rssMb: Math.round(m.rssBytes / 104857.6) / 10, cpuPct: typeof m.cpuPct === 'number' ? m.cpuPct : null };
  } catch {
    return null;
  }
}

/** Per-window RSS (the last /proc sample inside the window) and CPU (their mean) from the one target sampler. */
function fillFromUsage(series: HealthSample[], u: TargetUsage): void {
  let j = 0;
  for (const s of series) {
    const from = s.tSec - s.windowSec;
    let rss: number | null = null;
    const cpu: number[] = [];
    while (j < u.tSec.length && u.tSec[j]! <= s.tSec) {
      if (u.tSec[j]! > from) {
        rss = u.rssMb[j]!;
        cpu.push(u.cpuPct[j]!);
      }
      j++;
    }
    s.rssMb = rss;
    s.cpuPct = cpu.length ? r2(cpu.reduce((a, b) => a + b, 0) / cpu.length) : null;
  }
}

/** What one health window counts while it is open; `close()` turns it into the window's sample and opens the next. */
class HealthWindow {
  latency = new LatencyRecorder();
  deliveries = 0;
  accepted = 0;
  disconnects = 0;
  reconnects = 0;

  close(tSec: number, windowSec: number, connected: number, lag: { p99: number; max: number }): HealthSample {
    const lat = this.latency.count ? summarize(this.latency.encode()).latencyRawMs : null;
    const h: HealthSample = {
      tSec,
      windowSec,
      deliveries: this.deliveries,
      deliveriesPerSec: windowSec > 0 ? Math.round(this.deliveries / windowSec) : 0,
      accepted: this.accepted,
      p50Ms: lat ? lat.p50 : null,
      p99Ms: lat ? lat.p99 : null,
      rssMb: null,
      cpuPct: null,
      connected,
      unexpectedDisconnects: this.disconnects,
      reconnects: this.reconnects,
      rigLagP99Ms: lag.p99,
      rigLagMaxMs: lag.max,
    };
    this.latency = new LatencyRecorder();
    this.deliveries = this.accepted = this.disconnects = this.reconnects = 0;
    return h;
  }
}

/**
 * N minutes of steady traffic against one target as phases over one run session: `clients`
 * subscribers on one stream, `rate` messages/s through the one publisher while a health sample is
 * taken every `sampleSec`, then a drain. rules.ts judges the series.
 */
export async function runSoak(ctx: ScenarioContext, o: SoakOptions): Promise<ScenarioResult> {
  // The suite's context names the target (the soak CLI builds it from --target).
  const target = ctx.target;
  return withTarget(target, ctx.url ?? o.url, async (url, svc) => {
    const started = Date.now();
    const runId = `soak-${target.name}-${started.toString(36)}-${randomSeed()}`;
    const stream = o.stream || runId;
    const messages = Math.ceil(o.durationSec * o.rate);
    const health = watchRunner();
    const usage = svc ? watchTarget(svc.pid, 1000) : undefined;
    const win = new HealthWindow();
    const { s, clientKind } = openSession(ctx, o, { url, runId, stream, messages }, win);
    logLines(s.events, ctx.log, 'soak');
    const series: HealthSample[] = [];
    let runner: RunnerHealth | undefined;
    try {
      const rampStart = Date.now();
      await s.run(connectPhase({ perSec: o.ramp, detail: `${o.clients} ${clientKind} clients on ${target.name} at ${url}, ${o.rate} msg/s for ${o.durationSec} s, health every ${o.sampleSec} s` }));
      const connectedClients = s.book.connectedCount;
      await s.nap(1000);
      const { result: pr, t0 } = await s.run(
        publishPhase({
          url,
          messages,
          intervalMs: 1000 / o.rate,
          payloadBytes: o.payloadBytes,
          broadcastKey: o.broadcastKey,
          progressEveryMs: 0,
          detail: `${o.rate} msg/s for ${o.durationSec} s, health every ${o.sampleSec} s`,
          onStart: () => void health.recentLag(), // the ramp's lag is not the first window's
          onPublished: (_seq, ok) => void (ok && win.accepted++),
          // One health sample per window while the publisher runs; publishing stops after the last.
          stopWith: (at) => sampleWindows(ctx, o, { s, win, health, series, url, metrics: !svc }, at),
        }),
      );
      await s.run(settlePhase({ label: 'drain', maxMs: o.drainSec * 1000, stepMs: 100, until: allDelivered(s) }));
      const u = usage?.stop(t0);
      if (u) fillFromUsage(series, u);
      s.close();
      runner = health.stop();
      const rssSource = svc ? (u ? 'proc' : 'none') : series.some((x) => x.rssMb !== null) ? 'metrics' : 'none';
      return soakResult(o, { target: target.name, started, stream, runId, messages, s, pr, connectedClients, series, runner, clientKind, rssSource, local: !!svc, elapsedMs: Date.now() - rampStart });
    } finally {
      s.close();
      usage?.stop(Date.now());
      if (!runner) health.stop();
    }
  });
}

/** The soak's session: its client kind, each window's counts from the hooks, and the soak's own bounded reconnects for clients that do not reconnect by themselves. */
function openSession(ctx: ScenarioContext, o: SoakOptions, run: { url: string; runId: string; stream: string; messages: number }, win: HealthWindow) {
  const target = ctx.target;
  // A target that declares no lean client is soaked with its full client, and the result says so.
  const choice = pickClient(target, { prefer: o.clientKind })!;
  // Lean clients never reconnect by themselves; full ones do when the target says the library drives it.
  const runnerReconnects = choice.capabilities.reconnect === 'manual';
  // The soak's manual reconnect: a fixed pause (never under the target's floor) between attempts,
  // a per-client budget over the whole soak; closing the session cuts every pending pause short.
  const reconnectsOf = new Uint16Array(o.clients);
  const pauseMs = Math.max(1000, target.offlineFloorMs);
  const everUp = new Uint8Array(o.clients);
  const s: RunSession = new RunSession({
    target,
    urlOf: () => run.url,
    clients: o.clients,
    messages: run.messages,
    runId: run.runId,
    stream: run.stream,
    seed: ctx.seed,
    signal: ctx.signal,
    createClient: (x) => choice.create(x),
    hooks: {
      delivery: (d) => {
        if (!d.fresh) return;
        win.latency.recordMs(d.latencyMs);
        win.deliveries++;
      },
      connected: (i) => {
        if (everUp[i]) win.reconnects++;
        everUp[i] = 1;
      },
      disconnected: (i, { reason }) => {
        if (reason === 'dropped') return;
        win.disconnects++;
        // The server said not to come back (our own closes come only once the run stops).
        if (reason === 'closed') return;
        // A failed reconnect emits no new disconnect: the loop tries again, within the budget.
        const budget = MAX_RECONNECTS_PER_CLIENT - reconnectsOf[i]!;
        if (runnerReconnects) void s.reconnect(i, afterOffline(pauseMs, { retryMs: pauseMs, maxAttempts: budget, attemptTimeoutMs: Infinity }), { onAttempt: () => void reconnectsOf[i]!++ });
      },
    },
  });
  return { s, clientKind: choice.kind };
}

/** One health sample every `sampleSec` from t0 (RSS and CPU from /metrics when the runner did not start the target), until the last window or an abort. */
async function sampleWindows(ctx: ScenarioContext, o: SoakOptions, w: { s: RunSession; win: HealthWindow; health: ReturnType<typeof watchRunner>; series: HealthSample[]; url: string; metrics: boolean }, t0: number): Promise<void> {
  const { s, series } = w;
  const windows = Math.floor(o.durationSec / o.sampleSec);
  for (let k = 1; k <= windows && !s.aborted; k++) {
    await s.nap(t0 + k * (o.sampleSec * 1000) - Date.now());
    if (s.aborted) break;
    const tSec = r2((Date.now() - t0) / 1000);
    const h = w.win.close(tSec, r2(tSec - (series.at(-1)?.tSec ?? 0)), s.upCount, w.health.recentLag());
    if (w.metrics) {
      const m = await metricsSample(w.url);
      if (m) Object.assign(h, m);
    }
    series.push(h);
    ctx.progress({ phase: 'soak', ...h });
  }
}

interface SoakOutcome extends Pick<SoakDetail, 'series' | 'runner' | 'clientKind' | 'rssSource'> {
  target: string;
  started: number;
  stream: string;
  runId: string;
  messages: number;
  s: RunSession;
  pr: PublisherResult;
  connectedClients: number;
  /** The runner started the target (RSS from its process tree). */
  local: boolean;
  elapsedMs: number;
}

/** The shared validity rules, the soak's own rules over the series, and an abort: one verdict. */
function judge(o: SoakOptions, r: SoakOutcome) {
  const { s, pr, connectedClients, series } = r;
  const totals = s.ledger.totals();
  // The delivery counts and rates every publish-and-listen run judges by: arrivals of a message
  // whose publish outcome was unknown (the connection cut as the server died) stay outside them.
  const f = deliveryFields(s, pr.published, totals);
  const enc = f.latencyHistogram;
  const lat: LatencyReport = { latencyRawMs: f.latencyRawMs, latencyOverMinMs: f.latencyOverMinMs, skewFloor: f.skewFloor };
  const deliveredPct = pct(totals.receivedDeliveries - totals.unacceptedDeliveries, connectedClients * pr.published);
  const judgement = judgeSoak(series, { deliveredPct, lostDeliveries: totals.lostDeliveries, duplicates: totals.duplicates }, o);
  const core = checkValidity({
    clients: o.clients,
    connectedClients,
    connectFailures: o.clients - connectedClients,
    connectFailureCauses: s.book.summary().connectFailureCauses,
    totalMessages: r.messages,
    ...publisherFields(pr),
    // A target that stops accepting broadcasts mid-soak failed the soak (its throughput falls):
    // that is the soak's finding, so refused publishes warn instead of voiding the run.
    allowPublishFailures: true,
    expectedDeliveries: f.expectedDeliveries,
    receivedDeliveries: f.receivedDeliveries,
    unconfirmedDeliveries: f.unconfirmedDeliveries,
    deliveryRatePct: f.deliveryRatePct,
    deliveryRateOfConnectedPct: f.deliveryRateOfConnectedPct,
    skewFloor: f.skewFloor,
    foreignMessages: f.foreignMessages,
    ...runFields(r.runner, r.elapsedMs, soakPlannedMs(o)),
  });
  // An aborted soak was not the planned soak: its figures are partial.
  const abortFlag = s.aborted ? [{ code: 'SOAK_ABORTED', severity: 'fatal' as const, message: `stopped after ${series.length} of ${Math.floor(o.durationSec / o.sampleSec)} health windows` }] : [];
  const flags = [...core.flags, ...judgement.flags, ...abortFlag];
  const valid = !flags.some((f) => f.severity === 'fatal');
  const failed = judgement.rules.filter((x) => x.status !== 'pass');
  const fatalCodes = flags.filter((f) => f.severity === 'fatal').map((f) => f.code).join(', ');
  return { totals, enc, lat, deliveredPct, judgement, flags, valid, verdict: valid ? judgement.verdict : ('inconclusive' as const), failed, fatalCodes };
}

function soakResult(o: SoakOptions, r: SoakOutcome): ScenarioResult {
  const { s, pr, series } = r;
  const { totals, enc, lat, deliveredPct, judgement, flags, valid, verdict, failed, fatalCodes } = judge(o, r);
  const judgedRates = judgement.judged.map((i) => series[i]!.deliveriesPerSec);
  const sustained = judgedRates.length ? Math.round(judgedRates.reduce((a, b) => a + b, 0) / judgedRates.length) : null;
  const ruleValue = (id: string) => judgement.rules.find((x) => x.rule === id)?.value ?? null;
  const detail: SoakDetail = { kind: 'soak', durationSec: o.durationSec, sampleSec: o.sampleSec, warmupSec: o.warmupSec, clients: o.clients, rate: o.rate, clientKind: r.clientKind, rssSource: r.rssSource, series, judgement, runner: r.runner, ...s.lossReport() };
  return {
    scenario: 'soak',
    title: 'Soak: steady traffic with health rules',
    target: r.target,
    startedAt: new Date(r.started).toISOString(),
    params: { ...o, url: undefined, broadcastKey: o.broadcastKey ? '<redacted>' : '', stream: r.stream, runId: r.runId, messages: r.messages, intervalMs: r2(1000 / o.rate) },
    steps: [
      {
        step: { durationSec: o.durationSec, clients: o.clients, rate: o.rate },
        pass: verdict === 'pass',
        ...(verdict === 'pass' ? {} : { reason: valid ? failed.map((x) => `${x.rule}: ${x.message}`).join('; ') : `invalid: ${fatalCodes}` }),
        metrics: {
          verdict,
          connectedClients: r.connectedClients,
          published: pr.published,
          publishFailures: pr.failed,
          sustainedDeliveriesPerSec: sustained,
          deliveredPct,
          throughputDecayPct: ruleValue('throughput'),
          rssSlopeMbPerMin: ruleValue('memory'),
          lateP99Ms: ruleValue('latency'),
          earlyP99Ms: judgement.earlyP99Ms,
          unexpectedDisconnects: ruleValue('disconnects'),
          reconnects: series.reduce((a, x) => a + x.reconnects, 0),
          rssFirstMb: series.find((x) => x.rssMb !== null)?.rssMb ?? null,
          rssLastMb: [...series].reverse().find((x) => x.rssMb !== null)?.rssMb ?? null,
          rigLaggedWindows: judgement.rigLagged.length,
          windows: series.length,
        },
        ledger: totals,
        latency: lat,
        latencyEncoded: enc,
      },
    ],
    headline: { name: 'sustained deliveries/s (soak passed)', value: verdict === 'pass' ? sustained : null, unit: 'deliveries/s', higherIsBetter: true },
    ...(verdict === 'pass' ? {} : { failureMode: valid ? (verdict === 'insufficient_duration' ? `soak too short to judge: ${failed.filter((x) => x.status === 'insufficient').map((x) => x.rule).join(', ')}` : `soak rules failed: ${failed.map((x) => x.rule).join(', ')}`) : `invalid run: ${fatalCodes}` }),
    validity: { valid, flags },
    notShown: [
      `One steady load (${o.clients} clients x ${o.rate} msg/s), not the target's ceiling: S3/S4 step the load.`,
      'Runner and target share this machine\'s two cores; a neighbour\'s load shows up as latency in some windows.',
      `Memory is the target's RSS${r.local ? ' (its process tree, /proc)' : ' (its /metrics)'}; a leak smaller than the noise band over the judged span cannot be told from GC.`,
    ],
    detail: detail as unknown as Record<string, unknown>,
  };
}
