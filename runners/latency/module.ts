import { defineModule } from '../../engine/session/module.ts';
import { latencyReport } from './page.ts';
import { DELIVERY_MERGE } from '../../engine/session/results.ts';
import { LATENCY_OPTIONS, toJitterOptions, type LatencyOptions } from './options.ts';
import { jitterPlannedMs } from '../jitter/run.ts';
import { runLatency } from './run.ts';

export const latencyModule = defineModule({
  name: 'latency',
  doc: 'fixed-rate publishing to undisturbed clients; latency distribution (raw and over-min)',
  options: LATENCY_OPTIONS,
  // The jitter engine's rules (target, ledger cells, URLs) on the run it will be, checked before it starts.
  validate: (v: LatencyOptions) => (toJitterOptions(v), v),
  // The jitter run it is, so the jitter run's one plan.
  plannedMs: (o) => jitterPlannedMs(toJitterOptions(o)),
  run: (o, ctx) => runLatency(o, ctx.url!, { signal: ctx.signal, log: ctx.log, progress: ctx.progress }),
  summary: ['clients', 'totalMessages', 'expectedDeliveries', 'receivedDeliveries', 'lostDeliveries'],
  merge: [DELIVERY_MERGE],
  multi: { sharedStream: true },
  page: latencyReport,
});
