import { defineModule } from '../../engine/session/module.ts';
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
  multi: { sharedStream: false },
  cli: { usage: '[options]', json: 'always' },
});
