import type { OptionTable, OptionValues } from '../../../lib/options.ts';
import { sleep } from '../../../lib/time.ts';
import { capacityChart } from '../../../engine/pages/charts/capacity.ts';
import type { Section } from '../../../engine/pages/types.ts';
import { classifyStep } from '../failure-mode.ts';
import { idleStep } from '../idle-step.ts';
import { intList } from '../lists.ts';
import { emptyResult, finishValidity, idleFlags } from '../result.ts';
import { instanceParams, median, serverWorkersOf, withInstance } from '../target.ts';
import { defineScenario } from '../scenario.ts';
import type { ScenarioContext, ScenarioModule, ScenarioResult, StepResult } from '../types.ts';

/**
 * S1, idle memory per connection (seeds/000 Table 1): at each connection count and each of two
 * ramp rates, (peak RSS − idle baseline) / subscribed and the time to all-subscribed, median of
 * `s1Runs` runs, each on a fresh target instance. Built on the idle runner (its multi-process
 * lean clients and target sampler); a warm-up of a few hundred connections comes and goes before
 * the baseline so lazily compiled code is not counted as per-connection memory.
 */
const TABLE = {
  counts: { type: 'string', default: '10000,20000,40000', maxLength: 100, doc: 'S1: connection counts, comma-separated' },
  ramps: { type: 'string', default: '1000,250', maxLength: 100, doc: 'S1: ramp rates (connects/s over all loader processes), comma-separated; the method uses two' },
  runs: { type: 'int', default: 3, min: 1, max: 9, doc: 'S1: runs per point (the figure is their median)' },
  hold: { type: 'number', default: 5, min: 0, max: 600, doc: 'S1: seconds every connection is held once all are subscribed (RSS is sampled each second)' },
  warmup: { type: 'int', default: 300, min: 0, max: 10_000, doc: 'S1: connections opened and closed before the baseline (0 = none)' },
  minFreeMb: { type: 'int', default: 300, min: 0, max: 10_000_000, doc: 'S1: abort a run when available memory falls under this (MB)' },
  budgetBytes: { type: 'int', default: 4000, min: 1, max: 10_000_000, doc: 'S1: the goal line drawn on the bytes-per-connection chart' },
} as const satisfies OptionTable;

const typed = (v: OptionValues<typeof TABLE>) => ({ ...v, counts: intList('s1Counts', v.counts, 1, 1_000_000, 8), ramps: intList('s1Ramps', v.ramps, 1, 100_000, 4) });
export type S1Options = ReturnType<typeof typed>;

const MIN_SUBSCRIBED_PCT = 99;

async function onePoint(ctx: ScenarioContext, o: S1Options, count: number, ramp: number, r: ScenarioResult): Promise<StepResult> {
  const runs: { bpc: number | null; tta: number | null; subscribed: number; baseline: number | null; peak: number | null; cpu: number | null; mode: string }[] = [];
  for (let k = 0; k < o.runs && !ctx.signal.aborted; k++) {
    const where = `S1 ${count}@${ramp}/s run ${k + 1}`;
    const run = await withInstance(ctx, {}, async (inst) => {
      if (o.warmup > 0) {
        await idleStep(ctx, inst, { clients: o.warmup, ramp: Math.max(ramp, 500), hold: 0, stream: 'capacity-s1-warmup', minFreeMb: o.minFreeMb, timeoutSec: 120 });
        await sleep(2000);
      }
      const timeoutSec = Math.ceil(count / ramp) + o.hold + 120;
      return idleStep(ctx, inst, { clients: count, ramp, hold: o.hold, stream: 'capacity-s1', minFreeMb: o.minFreeMb, timeoutSec });
    });
    r.validity.flags.push(...idleFlags(run.result, where));
    const tm = run.result?.targetMetrics;
    const mode = classifyStep(run.obs, MIN_SUBSCRIBED_PCT);
    runs.push({ bpc: tm?.bytesPerConnection ?? null, tta: run.result?.timeToAllSubscribedMs ?? null, subscribed: run.obs.subscribed, baseline: tm?.baselineRssBytes ?? null, peak: tm?.peakRssBytes ?? null, cpu: tm?.peakCpuPct ?? null, mode: mode.mode === 'none' ? 'completed' : `${mode.mode}: ${mode.why}` });
    ctx.log(`${where}: ${run.obs.subscribed} subscribed, ${tm?.bytesPerConnection ?? 'n/a'} B/conn, ${runs.at(-1)!.mode}`);
  }
  const ok = runs.filter((x) => x.subscribed >= (count * MIN_SUBSCRIBED_PCT) / 100);
  const nums = (f: (x: (typeof runs)[number]) => number | null) => ok.map(f).filter((v): v is number => v !== null);
  const pass = runs.length === o.runs && ok.length === runs.length && nums((x) => x.bpc).length > 0;
  const failed = runs.find((x) => x.mode !== 'completed');
  return {
    step: { connections: count, rampPerSec: ramp },
    pass,
    ...(pass ? {} : { reason: failed?.mode ?? (runs.length < o.runs ? 'aborted' : 'no memory figure from the target') }),
    metrics: {
      bytesPerConnection: median(nums((x) => x.bpc)),
      bytesPerConnectionRuns: runs.map((x) => x.bpc ?? 'n/a').join(' / '),
      timeToAllSubscribedMs: median(nums((x) => x.tta)),
      subscribedMin: runs.length ? Math.min(...runs.map((x) => x.subscribed)) : 0,
      baselineRssBytes: median(nums((x) => x.baseline)),
      peakRssBytes: median(nums((x) => x.peak)),
      peakCpuPct: median(nums((x) => x.cpu)),
      runs: runs.length,
      failureMode: failed ? failed.mode : 'completed',
    },
  };
}

export const scenario: ScenarioModule<S1Options> = defineScenario({
  id: 'S1',
  title: 'S1 idle memory per connection',
  prefix: 's1',
  table: TABLE,
  typed,
  plannedSec: (o) => o.ramps.length * o.runs * o.counts.reduce((a, n) => a + n / o.ramps[0]! + o.hold + 15, 0),
  async run(ctx, o) {
    const workers = serverWorkersOf(ctx);
    const r = emptyResult(ctx, 'S1', scenario.title, instanceParams(ctx, { ...o }), { name: `bytes per connection at ${o.counts[0]!.toLocaleString('en-US')} (${o.ramps[0]}/s, median of ${o.runs})`, value: null, unit: 'B', higherIsBetter: false });
    for (const ramp of o.ramps) {
      let stopped: string | undefined;
      for (const count of o.counts) {
        if (ctx.signal.aborted) break;
        if (stopped) {
          r.steps.push({ step: { connections: count, rampPerSec: ramp }, pass: false, reason: `not run: ${stopped}`, metrics: { failureMode: 'not run' } });
          continue;
        }
        const step = await onePoint(ctx, o, count, ramp, r);
        r.steps.push(step);
        if (!step.pass) stopped = `the ${count.toLocaleString('en-US')} step at this ramp failed`;
      }
    }
    const first = r.steps[0];
    r.headline.value = first?.pass ? (first.metrics.bytesPerConnection as number | null) : null;
    const firstFail = r.steps.find((s) => !s.pass && !String(s.reason).startsWith('not run'));
    if (firstFail) r.failureMode = `${firstFail.step.connections} at ${firstFail.step.rampPerSec}/s: ${firstFail.reason}`;
    r.notShown.push(
      'peak RSS is the highest 1-second sample, standing in for a plateau; RSS includes heap the runtime has not returned yet',
      workers > 1
        ? `each target ran as ${workers} worker processes behind one port (--workers ${workers}): RSS is the whole process tree's (primary and workers), so the baseline holds ${workers + 1} runtimes`
        : 'one process per target (its fd limit caps one process near 20,000 connections on this machine); past it, --server-workers N',
    );
    return finishValidity(r);
  },
  sections(results) {
    const ramps = [...new Set(results.flatMap((r) => r.steps.map((s) => s.step.rampPerSec!)))];
    const budget = Number((results[0]?.params as { budgetBytes?: number } | undefined)?.budgetBytes ?? 4000);
    const charts = ramps
      .map((ramp) =>
        capacityChart(
          results.map((r) => ({
            label: r.target,
            metric: `bytes per connection at ${ramp}/s`,
            unit: 'B',
            budget,
            steps: r.steps.filter((s) => s.step.rampPerSec === ramp && typeof s.metrics.bytesPerConnection === 'number').map((s) => ({ clients: s.step.connections!, value: s.metrics.bytesPerConnection as number })),
          })),
        ),
      )
      .filter((c): c is NonNullable<typeof c> => c !== null)
      .map((c, i) => ({ ...c, id: `s1-bytes-${i}`, note: 'Median of the runs per point; lower is better. The dashed line is the goal, not a budget the walk stops at.' }));
    const section: Section = { title: 'S1 idle memory per connection', intro: '(peak RSS − idle baseline) / subscribed, from the target process tree (local) or its /metrics.', charts };
    if (charts.length === 0) section.omitted = ['no step produced a memory figure'];
    return [section];
  },
});
