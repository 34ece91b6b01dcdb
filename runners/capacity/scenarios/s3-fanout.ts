import { LOAD_OPTIONS, steppedScenario, steppedSections } from '../loader/kit.ts';

/**
 * S3 fan-out (seeds/000): 10K connections, 1K streams x 10 subscribers, the total publish rate
 * stepped; a step passes while >= 99% is delivered and the p99 over every delivery <= 100 ms.
 * Headline: the best deliveries/s within budget. With --nodes 2 on replay-redis the subscribers
 * of each stream alternate over the nodes and batches go to either node (issue 13's Redis fan-out).
 */
export const scenario = steppedScenario({
  id: 'S3',
  title: 'S3 fan-out: 1K streams x 10 subscribers, publish rate stepped',
  prefix: 's3',
  table: {
    connections: { type: 'int', default: 10_000, min: 2, max: 100_000, doc: 'connections (subscribers)' },
    streams: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'streams; connection i subscribes to stream i % streams' },
    rates: { type: 'string', default: '1000,2000,3000,4000,5000,6000,8000', pattern: /^\d+(,\d+){0,31}$/, doc: 'total publish rates to step through, messages/s, comma-separated' },
    stopAfterFailures: { type: 'int', default: 1, min: 1, max: 32, doc: 'stop the walk after this many failing steps' },
    ...LOAD_OPTIONS,
  } as const,
  shape: (o) => ({ connections: o.connections, streams: o.streams }),
  plans: (o, runId, streams) =>
    o.rates.split(',').map(Number).map((rate, i) => ({
      label: { publishRate: rate },
      keys: streams.map((name, s) => ({ key: `${runId}-${i}-${s}`, stream: s, streamName: name })),
      subscribersPerKey: o.connections / o.streams,
      ratePerSec: rate,
    })),
  sections: (results) =>
    steppedSections(results, { title: 'S3 fan-out', intro: '1K streams x 10 subscribers; the total publish rate is stepped until a step misses the budget.', idPrefix: 's3', x: 'publishRate', xLabel: 'offered publishes/s' }),
});
