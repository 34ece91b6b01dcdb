import type { OptionValues } from '../../../lib/options.ts';
import { bestWithinBudget, budgetOf, LOAD_OPTIONS, publishingOf, result, steppedSections, walkUnderLoad, LOADER_PLANNED_SEC } from '../loader/kit.ts';
import { defineScenario } from '../scenario.ts';
import { instanceParams } from '../target.ts';
import type { ScenarioModule } from '../types.ts';

/**
 * S4 hot stream (seeds/000): one stream, 1K subscribers, the number of publishers stepped, each
 * at a fixed rate with its own sequence space (so the ledger checks every publisher's messages
 * separately); same budget as S3.
 */
const TABLE = {
  connections: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'subscribers of the one stream' },
  publishers: { type: 'string', default: '1,2,4,8,16', pattern: /^\d+(,\d+){0,31}$/, doc: 'publisher counts to step through, comma-separated' },
  ratePerPublisher: { type: 'number', default: 10, min: 0.1, max: 10_000, doc: 'messages/s per publisher' },
  stopAfterFailures: { type: 'int', default: 1, min: 1, max: 32, doc: 'stop the walk after this many failing steps' },
  ...LOAD_OPTIONS,
} as const;
export type S4Options = OptionValues<typeof TABLE>;

export const scenario: ScenarioModule<S4Options> = defineScenario({
  id: 'S4',
  title: 'S4 hot stream: 1 stream x 1K subscribers, publishers stepped',
  prefix: 's4',
  table: TABLE,
  typed: (v) => v,
  plannedSec: () => LOADER_PLANNED_SEC,
  async run(ctx, o) {
    const startedAt = new Date().toISOString();
    const runId = `s4-${Date.now().toString(36)}-${ctx.seed}`;
    const budget = budgetOf(o);
    const { steps, flags } = await walkUnderLoad(ctx, o, { connections: o.connections, streams: 1 }, runId, (streams) =>
      o.publishers.split(',').map(Number).filter((n) => n > 0).map((n, i) => ({
        label: { publishers: n },
        keys: Array.from({ length: n }, (_, p) => ({ key: `${runId}-${i}-p${p}`, stream: 0, streamName: streams[0]! })),
        subscribersPerKey: o.connections,
        ratePerSec: n * o.ratePerPublisher,
        ...publishingOf(o),
      })),
    );
    return result(ctx, 'S4', scenario.title, startedAt, instanceParams(ctx, { ...o }), budget, steps, flags, { name: 'best deliveries/s within budget', value: bestWithinBudget(steps), unit: 'deliveries/s', higherIsBetter: true }, [
      'Publishers are independent sequence spaces sent by one batching HTTP publisher, not separate publishing processes.',
    ]);
  },
  sections: (results) =>
    steppedSections(results, { title: 'S4 hot stream', intro: 'One stream, every connection subscribed; publishers are added until a step misses the budget.', idPrefix: 's4', x: 'publishers', xLabel: 'publishers' }),
});
