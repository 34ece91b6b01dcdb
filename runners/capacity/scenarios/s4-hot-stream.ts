import { LOAD_OPTIONS, steppedScenario, steppedSections } from '../loader/kit.ts';

/**
 * S4 hot stream (seeds/000): one stream, 1K subscribers, the number of publishers stepped, each
 * at a fixed rate with its own sequence space (so the ledger checks every publisher's messages
 * separately); same budget as S3.
 */
export const scenario = steppedScenario({
  id: 'S4',
  title: 'S4 hot stream: 1 stream x 1K subscribers, publishers stepped',
  prefix: 's4',
  table: {
    connections: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'subscribers of the one stream' },
    publishers: { type: 'string', default: '1,2,4,8,16', pattern: /^\d+(,\d+){0,31}$/, doc: 'publisher counts to step through, comma-separated' },
    ratePerPublisher: { type: 'number', default: 10, min: 0.1, max: 10_000, doc: 'messages/s per publisher' },
    stopAfterFailures: { type: 'int', default: 1, min: 1, max: 32, doc: 'stop the walk after this many failing steps' },
    ...LOAD_OPTIONS,
  } as const,
  shape: (o) => ({ connections: o.connections, streams: 1 }),
  plans: (o, runId, streams) =>
    o.publishers.split(',').map(Number).filter((n) => n > 0).map((n, i) => ({
      label: { publishers: n },
      keys: Array.from({ length: n }, (_, p) => ({ key: `${runId}-${i}-p${p}`, stream: 0, streamName: streams[0]! })),
      subscribersPerKey: o.connections,
      ratePerSec: n * o.ratePerPublisher,
    })),
  notShown: ['Publishers are independent sequence spaces sent by one batching HTTP publisher, not separate publishing processes.'],
  sections: (results) =>
    steppedSections(results, { title: 'S4 hot stream', intro: 'One stream, every connection subscribed; publishers are added until a step misses the budget.', idPrefix: 's4', x: 'publishers', xLabel: 'publishers' }),
});
