import { defineModule } from '../../engine/session/module.ts';
import { throughputReport } from './page.ts';
import { DELIVERY_MERGE, LOSS_MERGE } from '../../engine/session/results.ts';
import { checkThroughputOptions, THROUGHPUT_OPTIONS } from './options.ts';
import { runThroughput, throughputPlannedMs } from './run.ts';

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
    LOSS_MERGE,
    { sum: ['outboundDeliveriesPerSec', 'usefulDeliveriesPerSec'], max: ['publishingMs'], counts: ['publishedMessages'], nonNegative: ['outboundDeliveriesPerSec', 'usefulDeliveriesPerSec', 'publishingMs'] },
  ],
  multi: { sharedStream: false },
  page: throughputReport,
});
