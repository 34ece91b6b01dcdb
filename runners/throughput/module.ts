import type { OptionTable } from '../../lib/options.ts';
import { withSortedSamples } from '../../shards/runner/adapters/bench-fields.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from '../../shards/runner/adapters/compat.ts';
import { queryOptions, withRouteTarget } from '../../shards/runner/adapters/route-target.ts';
import { defineModule } from '../../engine/session/module.ts';
import { throughputReport } from './page.ts';
import { DELIVERY_MERGE } from '../../engine/session/results.ts';
import { checkThroughputOptions, THROUGHPUT_OPTIONS } from './options.ts';
import { runThroughput, throughputPlannedMs } from './run.ts';

const THROUGHPUT_HTTP_OPTIONS = { ...queryOptions(THROUGHPUT_OPTIONS), samplesCap: COMPAT_OPTIONS.samplesCap, shard: COMPAT_OPTIONS.shard, channel: CLIENT_COMPAT_OPTIONS.channel, acProtocol: CLIENT_COMPAT_OPTIONS.acProtocol } as const satisfies OptionTable;

export const throughputModule = defineModule({
  name: 'throughput',
  doc: "the benchmark's fan-out test: total messages x n clients through a publisher pool; deliveries/s",
  options: THROUGHPUT_OPTIONS,
  validate: checkThroughputOptions,
  plannedMs: throughputPlannedMs,
  run: (o, ctx) => runThroughput(o, ctx.url!, { signal: ctx.signal, log: ctx.log, progress: ctx.progress }),
  summary: ['clients', 'totalMessages', 'expectedDeliveries', 'receivedDeliveries', 'lostDeliveries'],
  merge: [
    DELIVERY_MERGE,
    { sum: ['outboundDeliveriesPerSec', 'usefulDeliveriesPerSec'], max: ['publishingMs'], counts: ['publishedMessages'], nonNegative: ['outboundDeliveriesPerSec', 'usefulDeliveriesPerSec', 'publishingMs'] },
  ],
  multi: { sharedStream: false },
  page: throughputReport,
  http: {
    options: THROUGHPUT_HTTP_OPTIONS,
    fromQuery(q, t, given) {
      const { samplesCap, shard, channel, acProtocol, ...rest } = q;
      checkClientCompat({ channel, acProtocol }, t.route, given);
      return { values: withRouteTarget(rest, t), echo: { samplesCap, shard }, post: { samplesCap } };
    },
    finish: withSortedSamples,
  },
});
