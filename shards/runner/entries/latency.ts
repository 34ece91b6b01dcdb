import { parseOptions, type OptionTable } from '../../../lib/options.ts';
import { LATENCY_OPTIONS, parseLatencyOptions, type LatencyOptions } from '../../../runners/latency/options.ts';
import { runLatency } from '../../../runners/latency/run.ts';
import { defined } from '../params.ts';
import { withResolvedTarget } from '../targets.ts';
import type { BenchEntry } from '../types.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from './compat.ts';
import { benchmarkFields } from './bench-fields.ts';
import { queryOptions, redactBroadcastKey, shownOptions, withRouteTarget } from './route-target.ts';

const { reconnectStrategy, ...Q } = queryOptions(LATENCY_OPTIONS);
export const LATENCY_HTTP_OPTIONS = { ...Q, reconnectStrategy: { ...reconnectStrategy, aliases: ['reconnectMode'] }, samplesCap: COMPAT_OPTIONS.samplesCap, label: COMPAT_OPTIONS.label, shard: COMPAT_OPTIONS.shard, ...CLIENT_COMPAT_OPTIONS } as const satisfies OptionTable;

export const latencyEntry: BenchEntry = {
  test: 'latency',
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: LATENCY_HTTP_OPTIONS,
  doc: 'fixed-rate publishing to undisturbed clients; latency distribution (raw and over-min)',
  prepare(values, t) {
    const { samplesCap, label, shard, channel, acProtocol, clientLib, reconnectBaseMs, ...q } = parseOptions(LATENCY_HTTP_OPTIONS, { values, origin: 'query' });
    checkClientCompat({ channel, acProtocol, clientLib, reconnectBaseMs, reconnectStrategy: q.reconnectStrategy, backoffApplies: t.definition.reconnect === 'library' }, t.route, values);
    const opts = parseLatencyOptions({ values: withRouteTarget({ ...q, reconnectBaseMs }, t), origin: 'query' });
    return { opts: { opts, samplesCap, label }, effectiveParams: defined({ ...shownOptions(opts), target: t.route, targetSource: t.source, samplesCap, label, shard }), plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + 1000 + opts.msgs * opts.interval + opts.settle + 5000 };
  },
  run(o, t, ctx) {
    const { opts, samplesCap, label } = o as { opts: LatencyOptions; samplesCap: number; label?: string };
    return withResolvedTarget(t, async (url) => benchmarkFields(redactBroadcastKey(await runLatency(opts, url, { signal: ctx.signal, log: ctx.log, progress: (p) => ctx.progress(p) })), { route: t.route, server: t.server, label, samplesCap }));
  },
};
