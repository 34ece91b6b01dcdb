import type { OptionTable, OptionValues } from '../../../lib/options.ts';
import { capacityChart } from '../../../engine/pages/charts/capacity.ts';
import type { ChartSpec, Section } from '../../../engine/pages/types.ts';
import { verdict } from '../../../engine/measure/validity.ts';
import { defineScenario, type ScenarioSpec } from '../scenario.ts';
import { instanceParams } from '../target.ts';
import type { Budget, ScenarioContext, ScenarioId, ScenarioModule, ScenarioResult, ScenarioValidityFlag, StepResult } from '../types.ts';
import type { LoaderGroup } from './loaders.ts';
import type { TargetNodes } from './nodes.ts';
import type { RigLimits } from './rig.ts';
import { withLoad } from './session.ts';
import { runStep, type StepPlan } from './step.ts';

/** Options every loader-driven scenario shares (S3, S4, S5, sweep); each scenario adds its own. */
export const LOAD_OPTIONS = {
  stepSec: { type: 'number', default: 8, min: 0.5, max: 600, doc: 'seconds of publishing per step' },
  warmupSec: { type: 'number', default: 3, min: 0, max: 600, doc: 'seconds of publishing at the first step\'s load before the steps, not judged (JIT, buffers, connection pools; 0 = none)' },
  drainMs: { type: 'int', default: 2000, min: 0, max: 60_000, doc: 'wait after the last publish before settling the ledgers, ms' },
  tickMs: { type: 'int', default: 20, min: 1, max: 1000, doc: 'publisher batch interval, ms (one /_broadcast array per tick)' },
  publishInFlight: { type: 'int', default: 4, min: 1, max: 64, doc: 'publisher batches in flight per node at most (never two sharing a stream; 1 = each batch waits for the last answer)' },
  loaderPollMs: { type: 'int', default: 1, min: 0, max: 20, doc: 'loaders read their sockets in rounds this many ms apart during a step, so the target\'s writes do not pay for waking the rig (0: woken per arrival)' },
  loaders: { type: 'int', default: 2, min: 1, max: 16, doc: 'loader processes holding the connections' },
  nodes: { type: 'int', default: 1, min: 1, max: 8, doc: 'target nodes (more than 1 only for Redis-backed targets)' },
  connectConcurrency: { type: 'int', default: 200, min: 1, max: 5000, doc: 'connections opening at once per loader' },
  payloadBytes: { type: 'int', default: 0, min: 0, max: 65_536, doc: 'filler bytes per message' },
  minDeliveredPct: { type: 'number', default: 99, min: 0, max: 100, doc: 'budget: least share of expected deliveries that must arrive, %' },
  maxP99Ms: { type: 'number', default: 100, min: 1, max: 600_000, doc: 'budget: highest p99 latency over every delivery of a step, ms' },
  maxLoaderLagMs: { type: 'number', default: 25, min: 0, max: 60_000, doc: 'rig rule: loader event-loop lag p99 above this blames the rig, ms' },
  maxLoaderCpuPct: { type: 'number', default: 90, min: 0, max: 1000, doc: 'rig rule: loader CPU above this share of one core blames the rig, %' },
  minMachineIdlePct: { type: 'number', default: 5, min: 0, max: 100, doc: 'rig rule: the whole machine idle below this share (%) over a step, while the target had CPU to spare, blames the rig' },
  maxPublisherLateMs: { type: 'number', default: 100, min: 0, max: 600_000, doc: 'rig rule: publisher ticks later than this behind schedule blame the rig, ms' },
} satisfies OptionTable;

type LoadValues = { readonly [K in keyof typeof LOAD_OPTIONS]: number };

/** How each step publishes: the plan fields every loader scenario takes from its options. */
export const publishingOf = (o: LoadValues) => ({ durationMs: o.stepSec * 1000, drainMs: o.drainMs, tickMs: o.tickMs, payloadBytes: o.payloadBytes, maxInFlight: o.publishInFlight, loaderPollMs: o.loaderPollMs });

export const NOT_SHOWN = [
  "Loaders, publisher and target share this machine's two cores: a figure is what the target did while the rig took its share (loader CPU per step is in the metrics; rig flags say when the rig was the limit).",
  'Latency is publisher stamp to loader receipt on one clock; it includes the HTTP publish hop and up to one publisher tick of batching.',
  "p50/p99/p99.9 are over every delivery of a step, merged exactly across loaders (one HdrHistogram), not the worst loader's.",
];

/** How a walk judges and paces its steps, from the scenario's options (every loader scenario has LOAD_OPTIONS). */
export const walkOptionsOf = (o: LoadValues & { stopAfterFailures?: number }) => ({
  budget: { minDeliveredPct: o.minDeliveredPct, maxP99Ms: o.maxP99Ms } satisfies Budget,
  limits: { maxLoaderLagMs: o.maxLoaderLagMs, maxLoaderCpuPct: o.maxLoaderCpuPct, minSentPct: 98, maxPublisherLateMs: o.maxPublisherLateMs, minMachineIdlePct: o.minMachineIdlePct } satisfies RigLimits,
  /** Seconds of unjudged publishing at the first plan's load before it. */
  warmupSec: o.warmupSec,
  /** Stop after this many failing steps (a one-step scenario has no option for it). */
  stopAfterFailures: o.stopAfterFailures ?? 1,
});
type WalkOptions = ReturnType<typeof walkOptionsOf>;

/**
 * A cold target (unoptimised code, empty pools and buffers) can miss the budget on its first step
 * only; the method (seeds/000) warms it first. Publishes `warmupSec` seconds at `plan`'s load on
 * their own sequence spaces; the result is logged, never judged and never a step.
 */
export async function warmUp(ctx: ScenarioContext, fleet: LoaderGroup, nodes: TargetNodes, plan: StepPlan, w: WalkOptions): Promise<void> {
  const sec = w.warmupSec;
  if (sec <= 0 || ctx.signal.aborted) return;
  const { result: r } = await runStep(fleet, nodes, { ...plan, label: { warmup: 1 }, durationMs: sec * 1000, keys: plan.keys.map((k) => ({ ...k, key: `${k.key}-warmup` })) }, w.budget, w.limits);
  ctx.log(`${ctx.target.name} warm-up (${sec} s at the first step's load, not judged): ${r.metrics.published} published, ${r.metrics.deliveredPct}% delivered, p99 ${r.metrics.p99Ms} ms`);
}

/**
 * Walk the plans in order, stopping after `stopAfterFailures` failing steps (or on abort).
 * Step flags carry the step in their message so the run's validity names where they fired.
 */
export async function walk(ctx: ScenarioContext, fleet: LoaderGroup, nodes: TargetNodes, plans: StepPlan[], w: WalkOptions): Promise<{ steps: StepResult[]; flags: ScenarioValidityFlag[] }> {
  const steps: StepResult[] = [];
  const flags: ScenarioValidityFlag[] = [];
  let failures = 0;
  if (plans[0]) await warmUp(ctx, fleet, nodes, plans[0], w);
  for (const p of plans) {
    if (ctx.signal.aborted) break;
    const { result, flags: f } = await runStep(fleet, nodes, p, w.budget, w.limits);
    steps.push(result);
    const label = Object.entries(p.label).map(([k, v]) => `${k}=${v}`).join(' ');
    for (const x of f) flags.push({ ...x, message: `${label}: ${x.message}` });
    const m = result.metrics;
    ctx.log(`${ctx.target.name} ${label}: ${m.deliveriesPerSec} deliveries/s, ${m.deliveredPct}% delivered, p99 ${m.p99Ms} ms, server CPU ${m.serverCpuPct}%, loader CPU ${m.loaderCpuPct}%${result.pass ? '' : ` FAIL (${result.reason})`}`);
    ctx.progress({ target: ctx.target.name, step: p.label, pass: result.pass, deliveriesPerSec: m.deliveriesPerSec });
    if (!result.pass && ++failures >= w.stopAfterFailures) break;
  }
  return { steps, flags };
}

/** Best deliveries/s over the steps within budget (null when none passed). */
export function bestWithinBudget(steps: readonly StepResult[]): number | null {
  const ok = steps.filter((s) => s.pass).map((s) => Number(s.metrics.deliveriesPerSec));
  return ok.length ? Math.max(...ok) : null;
}

export function failureModeOf(steps: readonly StepResult[]): string {
  const f = steps.find((s) => !s.pass);
  if (!f) return 'no step failed the budget (step higher to find the limit)';
  const label = Object.entries(f.step).map(([k, v]) => `${k}=${v}`).join(' ');
  return `${f.metrics.limitedBy === 'rig' ? 'the rig' : 'budget'} at ${label}: ${f.reason}`;
}

export function result(ctx: ScenarioContext, id: ScenarioId, title: string, startedAt: string, params: Record<string, unknown>, budget: Budget, steps: StepResult[], flags: ScenarioValidityFlag[], headline: ScenarioResult['headline'], extraNotShown: string[] = []): ScenarioResult {
  return {
    scenario: id,
    title,
    target: ctx.target.name,
    startedAt,
    params,
    budget,
    steps,
    headline,
    failureMode: failureModeOf(steps),
    validity: verdict(flags),
    notShown: [...NOT_SHOWN, ...extraNotShown],
  };
}

/** One metric per step against an x taken from the step (capacityChart's model, relabelled). */
export function stepChart(results: readonly ScenarioResult[], o: { id: string; x: string; xLabel: string; key: string; metric: string; unit: string; budget?: number; note: string }): ChartSpec | null {
  const spec = capacityChart(
    results.map((r) => ({
      label: r.target,
      metric: o.metric,
      unit: o.unit,
      budget: o.budget ?? 0,
      steps: r.steps.filter((s) => typeof s.step[o.x] === 'number' && typeof s.metrics[o.key] === 'number').map((s) => ({ clients: s.step[o.x]!, value: Number(s.metrics[o.key]) })),
    })),
  );
  if (!spec) return null;
  return { ...spec, id: o.id, xLabel: o.xLabel, note: o.note, ...(o.budget === undefined ? { hlines: [] } : {}) };
}

/** The two charts of a stepped scenario: p99 with the budget line, deliveries/s. */
export function steppedSections(results: readonly ScenarioResult[], o: { title: string; intro: string; idPrefix: string; x: string; xLabel: string }): Section[] {
  const budget = results.find((r) => r.budget)?.budget;
  const charts = [
    stepChart(results, { id: `${o.idPrefix}-p99`, x: o.x, xLabel: o.xLabel, key: 'p99Ms', metric: 'p99 latency', unit: 'ms', ...(budget ? { budget: budget.maxP99Ms } : {}), note: 'p99 over every delivery of the step; a step passes under the dashed budget line (and with >= 99% delivered).' }),
    stepChart(results, { id: `${o.idPrefix}-rate`, x: o.x, xLabel: o.xLabel, key: 'deliveriesPerSec', metric: 'deliveries/s', unit: '/s', note: 'Distinct accepted deliveries per second of publishing (duplicates never count).' }),
  ].filter((c): c is ChartSpec => c !== null);
  return [{ title: o.title, intro: o.intro, charts, ...(charts.length ? {} : { omitted: ['no steps were measured'] }) }];
}

/** No estimate from the options yet (connects, warm-up and steps vary with the target): what Retry-After and the ETA assume. */
export const LOADER_PLANNED_SEC = 120;

/**
 * S3, S4 and S5: open `shape(o)` over the loaders once, walk `plans(o)` (each publishing as the
 * options say), and report against the budget; the headline defaults to the best deliveries/s
 * within budget.
 */
export function steppedScenario<T extends OptionTable & typeof LOAD_OPTIONS>(
  s: Omit<ScenarioSpec<T, OptionValues<T>>, 'typed' | 'plannedSec' | 'run'> & {
    shape(o: OptionValues<T>): { connections: number; streams: number };
    plans(o: OptionValues<T>, runId: string, streams: string[]): Pick<StepPlan, 'label' | 'keys' | 'subscribersPerKey' | 'ratePerSec'>[];
    headline?(steps: StepResult[]): ScenarioResult['headline'];
    notShown?: string[];
  },
): ScenarioModule<OptionValues<T>> {
  return defineScenario({
    ...s,
    typed: (v) => v,
    plannedSec: () => LOADER_PLANNED_SEC,
    async run(ctx, o) {
      const startedAt = new Date().toISOString();
      const runId = `${s.prefix}-${Date.now().toString(36)}-${ctx.seed}`;
      // T has LOAD_OPTIONS' specs, but OptionValues cannot resolve a generic table's value types.
      const load = o as OptionValues<T> & LoadValues & { stopAfterFailures?: number };
      const walkOptions = walkOptionsOf(load);
      const { steps, flags } = await withLoad(ctx, { ...s.shape(o), loaders: load.loaders, nodes: load.nodes, connectConcurrency: load.connectConcurrency }, runId, async (fleet, nodes, streams, openFlags) => {
        const w = await walk(ctx, fleet, nodes, s.plans(o, runId, streams).map((p) => ({ ...p, ...publishingOf(load) })), walkOptions);
        return { steps: w.steps, flags: [...openFlags, ...w.flags] };
      });
      const headline = s.headline?.(steps) ?? { name: 'best deliveries/s within budget', value: bestWithinBudget(steps), unit: 'deliveries/s', higherIsBetter: true };
      return result(ctx, s.id, s.title, startedAt, instanceParams(ctx, { ...o }), walkOptions.budget, steps, flags, headline, s.notShown);
    },
  });
}
