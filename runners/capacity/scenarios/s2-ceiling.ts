import type { OptionTable, OptionValues } from '../../../lib/options.ts';
import { capacityChart } from '../../../engine/pages/charts/capacity.ts';
import { classifyStep } from '../failure-mode.ts';
import { idleStep } from '../idle-step.ts';
import { intList, invalidOption } from '../lists.ts';
import { emptyResult, errorOutcome, finishValidity, idleFlags } from '../result.ts';
import { availableMemMb, instanceParams, isTargetStartError, withInstance } from '../target.ts';
import { defineScenario } from '../scenario.ts';
import type { ScenarioModule } from '../types.ts';

/**
 * S2, the connection ceiling (seeds/000 Table 2): step the connection count up, each step on a
 * fresh target instance, until a step seats under `s2MinSubscribedPct`, the target exits, or
 * available memory falls under the floor; the failure mode is named (crash, memory, the rig,
 * the target's fd limit, connect-rate bound, target refused). Every step is bounded in time.
 */
const TABLE = {
  steps: { type: 'string', default: '10000,20000,40000,60000,80000', maxLength: 200, doc: 'S2: connection counts to step through, ascending' },
  ramp: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'S2: connects per second over all loader processes' },
  hold: { type: 'number', default: 5, min: 0, max: 600, doc: 'S2: seconds each step holds its connections' },
  minSubscribedPct: { type: 'number', default: 99, min: 1, max: 100, doc: 'S2: a step holds when at least this share subscribed' },
  minFreeMb: { type: 'int', default: 300, min: 0, max: 10_000_000, doc: 'S2: stop when available memory falls under this (MB), checked before and during each step' },
  targetFdLimit: { type: 'int', default: 0, min: 0, max: 1_048_576, doc: 'S2: start local targets with this open-file limit (ulimit -n), e.g. a small container; 0 = inherit' },
  workers: { type: 'string', default: 'auto', pattern: /^(auto|[1-9]\d{0,2})$/, doc: 'S2: loader processes: auto (from the fd limit) or a count' },
  workerFdLimit: { type: 'int', default: 0, min: 0, max: 1_048_576, doc: "S2: start loader processes with this open-file limit (reproduces a small rig); 0 = inherit" },
  connectTimeoutMs: { type: 'int', default: 20_000, min: 100, max: 600_000, doc: 'S2: per-connection time to subscribe before it counts as failed' },
  stepTimeoutSec: { type: 'int', default: 900, min: 10, max: 7200, doc: 'S2: hard bound on one step (ramp + hold + close)' },
} as const satisfies OptionTable;

function typed(v: OptionValues<typeof TABLE>) {
  const steps = intList('s2Steps', v.steps, 1, 2_000_000, 16);
  if (steps.some((n, i) => i > 0 && n <= steps[i - 1]!)) throw invalidOption('s2Steps', `option "s2Steps" must be ascending (got ${v.steps})`);
  if (v.workers !== 'auto' && Number(v.workers) > steps[0]!) throw invalidOption('s2Workers', `s2Workers (${v.workers}) exceeds the first step (${steps[0]})`);
  return { ...v, steps };
}
export type S2Options = ReturnType<typeof typed>;

export const scenario: ScenarioModule<S2Options> = defineScenario({
  id: 'S2',
  title: 'S2 connection ceiling',
  prefix: 's2',
  table: TABLE,
  typed,
  plannedSec: (o) => o.steps.reduce((a, n) => a + n / o.ramp + o.hold + 15, 0),
  async run(ctx, o) {
    const r = emptyResult(ctx, 'S2', scenario.title, instanceParams(ctx, { ...o }), { name: 'max subscribed reached', value: null, unit: 'connections', higherIsBetter: true });
    let best = 0;
    for (const n of o.steps) {
      if (ctx.signal.aborted) break;
      const avail = availableMemMb();
      if (avail < o.minFreeMb) {
        r.failureMode = `memory: available memory ${avail} MB is under the floor of ${o.minFreeMb} MB before the ${n.toLocaleString('en-US')} step`;
        r.steps.push({ step: { connections: n }, pass: false, reason: r.failureMode, metrics: { failureMode: 'memory', availableMb: avail } });
        break;
      }
      let stepRun: Awaited<ReturnType<typeof idleStep>>;
      try {
        stepRun = await withInstance(ctx, { fdLimit: o.targetFdLimit }, (inst) =>
          idleStep(ctx, inst, { clients: n, ramp: o.ramp, hold: o.hold, stream: 'capacity-s2', minFreeMb: o.minFreeMb, timeoutSec: o.stepTimeoutSec, workers: o.workers, workerFdLimit: o.workerFdLimit, connectTimeoutMs: o.connectTimeoutMs }),
        );
      } catch (err) {
        // A step whose target did not start measured nothing: the walk ends there, keeping the steps that held.
        if (!isTargetStartError(err)) throw err;
        const { failureMode, flag } = errorOutcome(err, `S2 ${n}`);
        r.failureMode = failureMode;
        r.validity.flags.push(flag);
        ctx.log(`S2 ${n}: ${failureMode}`);
        break;
      }
      const { result, obs } = stepRun;
      r.validity.flags.push(...idleFlags(result, `S2 ${n}`));
      const c = classifyStep(obs, o.minSubscribedPct);
      const pass = c.mode === 'none';
      best = Math.max(best, obs.subscribed);
      r.steps.push({
        step: { connections: n },
        pass,
        ...(pass ? {} : { reason: `${c.mode}: ${c.why}` }),
        metrics: {
          subscribed: obs.subscribed,
          subscribedPct: Math.round((obs.subscribed / n) * 1000) / 10,
          peakRssBytes: result?.targetMetrics.peakRssBytes ?? null,
          bytesPerConnection: result?.targetMetrics.bytesPerConnection ?? null,
          timeToAllSubscribedMs: result?.timeToAllSubscribedMs ?? null,
          peakCpuPct: obs.targetPeakCpuPct,
          targetFdPeak: obs.targetFdPeak,
          targetFdLimit: obs.targetFdLimit,
          targetProcesses: obs.targetProcesses ?? null,
          minAvailableMb: obs.minAvailMb,
          failureCauses: JSON.stringify(obs.failureCauses),
          loaderProcesses: result?.runner.workers ?? null,
          failureMode: c.mode === 'none' ? 'completed' : c.mode,
        },
      });
      ctx.log(`S2 ${n}: ${c.mode === 'none' ? 'held' : c.mode} (${c.why})`);
      if (!pass) {
        r.failureMode = `${c.mode}: ${c.why}`;
        if (c.mode === 'the rig') r.validity.flags.push({ code: 'RIG_LIMIT', severity: 'fatal', message: `S2 ${n}: ${c.why}` });
        break;
      }
    }
    r.headline.value = r.steps.some((s) => s.metrics.subscribed !== undefined) ? best : null;
    if (!r.failureMode && r.steps.length === o.steps.length) r.failureMode = `none: every step held, no ceiling found up to ${o.steps.at(-1)!.toLocaleString('en-US')}`;
    r.notShown.push('a ceiling above the last step is not searched for', 'steps are not repeated: a failure is one run, not a median');
    return finishValidity(r);
  },
  sections(results) {
    const chart = capacityChart(
      results.map((r) => ({
        label: r.target,
        metric: 'subscribed share',
        unit: '%',
        budget: Number((r.params as { minSubscribedPct?: number }).minSubscribedPct ?? 99),
        steps: r.steps.filter((s) => typeof s.metrics.subscribedPct === 'number').map((s) => ({ clients: s.step.connections!, value: s.metrics.subscribedPct as number })),
      })),
    );
    const modes = results.map((r) => `${r.target}: ${r.failureMode ?? 'n/a'}`);
    return [{ title: 'S2 connection ceiling', intro: `What stopped each walk — ${modes.join('; ')}`, charts: chart ? [{ ...chart, id: 's2-subscribed', note: 'Each point is one step; the walk stops at the first step under the line (the floor: at least this share subscribed).' }] : [], ...(chart ? {} : { omitted: ['no step ran'] }) }];
  },
});
