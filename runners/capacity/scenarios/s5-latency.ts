import type { OptionValues } from '../../../lib/options.ts';
import { budgetOf, LOAD_OPTIONS, publishingOf, result, walkUnderLoad, LOADER_PLANNED_SEC } from '../loader/kit.ts';
import { defineScenario } from '../scenario.ts';
import { instanceParams } from '../target.ts';
import type { Section } from '../../report/types.ts';
import type { ScenarioModule } from '../types.ts';
import { latencyTableSection } from '../loader/sections.ts';

/**
 * S5 latency at fixed load (seeds/000): the S3 shape at one publish rate held for a longer
 * window; p50/p99/p99.9/max over every delivery (merged exactly across loaders) and the server's
 * CPU. Judged against the same budget so a rig-limited snapshot says so.
 */
const TABLE = {
  connections: { type: 'int', default: 10_000, min: 1, max: 100_000, doc: 'connections (subscribers)' },
  streams: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'streams; connection i subscribes to stream i % streams' },
  rate: { type: 'number', default: 400, min: 0.1, max: 1_000_000, doc: 'total publish rate, messages/s (seeds/000: 25/process x 16 = 400)' },
  ...LOAD_OPTIONS,
  stepSec: { ...LOAD_OPTIONS.stepSec, default: 30, doc: 'seconds of publishing at the fixed rate' },
} as const;
export type S5Options = OptionValues<typeof TABLE>;

export const scenario: ScenarioModule<S5Options> = defineScenario({
  id: 'S5',
  title: 'S5 latency at fixed load',
  prefix: 's5',
  table: TABLE,
  typed: (v) => v,
  plannedSec: () => LOADER_PLANNED_SEC,
  async run(ctx, o) {
    const startedAt = new Date().toISOString();
    const runId = `s5-${Date.now().toString(36)}-${ctx.seed}`;
    const budget = budgetOf(o);
    // One step, so stopAfterFailures is moot.
    const { steps, flags } = await walkUnderLoad(ctx, o, { connections: o.connections, streams: o.streams }, runId, (streams) => [
      { label: { publishRate: o.rate }, keys: streams.map((name, s) => ({ key: `${runId}-${s}`, stream: s, streamName: name })), subscribersPerKey: o.connections / o.streams, ratePerSec: o.rate, ...publishingOf(o) },
    ]);
    const p99 = steps[0]?.metrics.p99Ms;
    return result(ctx, 'S5', scenario.title, startedAt, instanceParams(ctx, { ...o }), budget, steps, flags, { name: 'p99 latency at fixed load', value: typeof p99 === 'number' ? p99 : null, unit: 'ms', higherIsBetter: false }, ['One fixed-load snapshot, not a trend: S3 shows how latency moves with throughput.']);
  },
  sections: (results): Section[] => [latencyTableSection(results, 'S5 latency at fixed load')],
});
