import { LOAD_OPTIONS, steppedScenario } from '../loader/kit.ts';
import { latencyTableSection } from '../loader/sections.ts';

/**
 * S5 latency at fixed load (seeds/000): the S3 shape at one publish rate held for a longer
 * window; p50/p99/p99.9/max over every delivery (merged exactly across loaders) and the server's
 * CPU. Judged against the same budget so a rig-limited snapshot says so.
 */
export const scenario = steppedScenario({
  id: 'S5',
  title: 'S5 latency at fixed load',
  prefix: 's5',
  table: {
    connections: { type: 'int', default: 10_000, min: 1, max: 100_000, doc: 'connections (subscribers)' },
    streams: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'streams; connection i subscribes to stream i % streams' },
    rate: { type: 'number', default: 400, min: 0.1, max: 1_000_000, doc: 'total publish rate, messages/s (seeds/000: 25/process x 16 = 400)' },
    ...LOAD_OPTIONS,
    stepSec: { ...LOAD_OPTIONS.stepSec, default: 30, doc: 'seconds of publishing at the fixed rate' },
  } as const,
  shape: (o) => ({ connections: o.connections, streams: o.streams }),
  // One step, so stopAfterFailures is moot.
  plans: (o, runId, streams) => [{ label: { publishRate: o.rate }, keys: streams.map((name, s) => ({ key: `${runId}-${s}`, stream: s, streamName: name })), subscribersPerKey: o.connections / o.streams, ratePerSec: o.rate }],
  headline: (steps) => {
    const p99 = steps[0]?.metrics.p99Ms;
    return { name: 'p99 latency at fixed load', value: typeof p99 === 'number' ? p99 : null, unit: 'ms', higherIsBetter: false };
  },
  notShown: ['One fixed-load snapshot, not a trend: S3 shows how latency moves with throughput.'],
  sections: (results) => [latencyTableSection(results, 'S5 latency at fixed load')],
});
