import type { OptionValues } from '../../../lib/options.ts';
import { LOADER_PLANNED_SEC, LOAD_OPTIONS, publishingOf, result, stepChart, walkOptionsOf, warmUp } from '../loader/kit.ts';
import { invalidOption } from '../lists.ts';
import { defineScenario } from '../scenario.ts';
import { instanceParams, serverWorkersOf } from '../target.ts';
import { LoaderGroup } from '../loader/loaders.ts';
import { startNodes } from '../loader/nodes.ts';
import { subscribeFlag } from '../loader/rig.ts';
import { runStep } from '../loader/step.ts';
import type { ChartSpec } from '../../../engine/pages/types.ts';
import type { ScenarioModule, ScenarioValidityFlag, StepResult } from '../types.ts';

/**
 * Saturation sweep of the rig: the same target, the same connections and the same offered load,
 * held by K = 1, 2, 4, ... loader processes in turn. While adding loaders improves the figure,
 * the rig was the limit; where it stops improving, the target is. Each K's latency is one
 * histogram merged exactly over its loaders (never the worst loader's percentile).
 */
const TABLE = {
  connections: { type: 'int', default: 10_000, min: 1, max: 100_000, doc: 'connections (subscribers)' },
  streams: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'streams; connection i subscribes to stream i % streams' },
  rate: { type: 'number', default: 3000, min: 0.1, max: 1_000_000, doc: 'total publish rate, messages/s, the same for every K' },
  loaderCounts: { type: 'string', default: '1,2,4', pattern: /^\d+(,\d+){0,15}$/, doc: 'loader process counts to sweep, comma-separated (each 1..16)' },
  ...LOAD_OPTIONS,
} as const;
export type SweepOptions = OptionValues<typeof TABLE>;

/** The smallest K after which more loaders improve deliveries/s by under `tolerancePct` and no rig flag fired: the rig stopped being the limit there. */
export function rigFreeAt(steps: readonly StepResult[], tolerancePct = 5): number | null {
  const best = Math.max(0, ...steps.map((s) => Number(s.metrics.deliveriesPerSec)));
  const ok = steps.find((s) => s.metrics.rigFlags === 0 && Number(s.metrics.deliveriesPerSec) >= best * (1 - tolerancePct / 100));
  return ok ? ok.step.loaders! : null;
}

export const scenario: ScenarioModule<SweepOptions> = defineScenario({
  id: 'sweep',
  title: 'Saturation sweep of the rig: K loaders at the same offered load',
  prefix: 'sweep',
  table: TABLE,
  typed(o) {
    const bad = o.loaderCounts.split(',').find((k) => Number(k) < 1 || Number(k) > 16);
    if (bad !== undefined) throw invalidOption('loaderCounts', `sweep option "loaderCounts" must list counts in 1..16 (got ${bad})`);
    return o;
  },
  plannedSec: () => LOADER_PLANNED_SEC,
  async run(ctx, o) {
    const startedAt = new Date().toISOString();
    const runId = `sweep-${Date.now().toString(36)}-${ctx.seed}`;
    const w = walkOptionsOf(o);
    const { budget, limits } = w;
    const steps: StepResult[] = [];
    const flags: ScenarioValidityFlag[] = [];
    // A `name:K` label's node count wins over the option, as in S3-S5 (loader/session.ts).
    const nodes = await startNodes(ctx.target, { ...(ctx.url ? { url: ctx.url } : {}), nodes: ctx.nodes ?? o.nodes, workers: serverWorkersOf(ctx) });
    ctx.log(`${ctx.target.name}: sweep on ${nodes.urls.length} node(s)`);
    try {
      for (const [i, k] of o.loaderCounts.split(',').map(Number).entries()) {
        if (ctx.signal.aborted) break;
        const streams = Array.from({ length: o.streams }, (_, s) => `cap-${runId}-${i}-${s}`);
        const fleet = await LoaderGroup.open({ target: ctx.target.name, urls: nodes.urls, streams, connections: o.connections, loaders: k, concurrency: o.connectConcurrency });
        try {
          const sub = subscribeFlag(fleet.ready, 99);
          if (sub) flags.push({ ...sub, message: `loaders=${k}: ${sub.message}` });
          const plan = { label: { loaders: k }, keys: streams.map((name, s) => ({ key: `${runId}-${i}-${s}`, stream: s, streamName: name })), subscribersPerKey: o.connections / o.streams, ratePerSec: o.rate, ...publishingOf(o) };
          await warmUp(ctx, fleet, nodes, plan, w);
          const { result: r, flags: f } = await runStep(fleet, nodes, plan, budget, limits);
          // In a sweep a rig flag is the finding, not a fault: record how many fired per K.
          r.metrics.rigFlags = f.length;
          steps.push(r);
          for (const x of f) flags.push({ ...x, severity: 'warning', message: `loaders=${k}: ${x.message}` });
          ctx.log(`${ctx.target.name} loaders=${k}: ${r.metrics.deliveriesPerSec} deliveries/s, p99 ${r.metrics.p99Ms} ms, loader CPU max ${r.metrics.loaderCpuPct}%, lag p99 ${r.metrics.loaderLagP99Ms} ms, rig flags ${f.map((x) => x.code).join(',') || 'none'}`);
        } finally {
          await fleet.close();
        }
      }
    } finally {
      await nodes.close();
    }
    return result(ctx, 'sweep', scenario.title, startedAt, instanceParams(ctx, { ...o }), budget, steps, flags, { name: 'loaders needed before the rig stops being the limit', value: rigFreeAt(steps), unit: 'loaders', higherIsBetter: false }, [
      'More loader processes on the same two cores also take CPU from the target: past the point where the rig stops being the limit, adding loaders can lower the figure.',
    ]);
  },
  sections: (results) => {
    const charts = [
      stepChart(results, { id: 'sweep-rate', x: 'loaders', xLabel: 'loader processes', key: 'deliveriesPerSec', metric: 'deliveries/s', unit: '/s', note: 'Same offered load at every K: a rising line means the rig was the limit at the smaller K.' }),
      stepChart(results, { id: 'sweep-p99', x: 'loaders', xLabel: 'loader processes', key: 'p99Ms', metric: 'p99 latency', unit: 'ms', budget: results[0]?.budget?.maxP99Ms ?? 100, note: 'p99 over every delivery, merged exactly over the K loaders.' }),
      stepChart(results, { id: 'sweep-loader-cpu', x: 'loaders', xLabel: 'loader processes', key: 'loaderCpuPct', metric: 'busiest loader CPU', unit: '% of a core', note: 'A loader near a full core is the rig at its limit.' }),
    ].filter((c): c is ChartSpec => c !== null);
    return [{ title: 'Saturation sweep of the rig', intro: 'K loader processes hold the same connections at the same offered load.', charts, ...(charts.length ? {} : { omitted: ['no sweep steps were measured'] }) }];
  },
});
