import type { OptionTable } from '../../lib/options.ts';
import { benchmarkFields } from '../../shards/runner/adapters/bench-fields.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from '../../shards/runner/adapters/compat.ts';
import { queryOptions, withRouteTarget } from '../../shards/runner/adapters/route-target.ts';
import { defineModule } from '../../engine/session/module.ts';
import { latencyReport } from './page.ts';
import { DELIVERY_MERGE } from '../../engine/session/results.ts';
import { LATENCY_OPTIONS, toJitterOptions, type LatencyOptions } from './options.ts';
import { jitterPlannedMs } from '../jitter/run.ts';
import { runLatency } from './run.ts';

const { reconnectStrategy, ...Q } = queryOptions(LATENCY_OPTIONS);
const LATENCY_HTTP_OPTIONS = { ...Q, reconnectStrategy: { ...reconnectStrategy, aliases: ['reconnectMode'] }, samplesCap: COMPAT_OPTIONS.samplesCap, label: COMPAT_OPTIONS.label, shard: COMPAT_OPTIONS.shard, ...CLIENT_COMPAT_OPTIONS } as const satisfies OptionTable;

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
  http: {
    options: LATENCY_HTTP_OPTIONS,
    fromQuery(q, t, given) {
      const { samplesCap, label, shard, channel, acProtocol, clientLib, reconnectBaseMs, ...rest } = q;
      checkClientCompat({ channel, acProtocol, clientLib, reconnectBaseMs, reconnectStrategy: rest.reconnectStrategy, backoffApplies: t.definition.reconnect === 'library' }, t.route, given);
      return { values: withRouteTarget({ ...rest, reconnectBaseMs }, t), echo: { samplesCap, label, shard }, post: { samplesCap, label } };
    },
    finish: benchmarkFields,
  },
});
