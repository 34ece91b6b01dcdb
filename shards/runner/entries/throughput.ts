import { parseOptions, type OptionTable } from '../../../lib/options.ts';
import { THROUGHPUT_OPTIONS, parseThroughputOptions, type ThroughputOptions } from '../../../runners/throughput/options.ts';
import { runThroughput } from '../../../runners/throughput/run.ts';
import { defined } from '../params.ts';
import { withResolvedTarget } from '../targets.ts';
import { withSortedSamples } from './bench-fields.ts';
import type { BenchEntry } from '../types.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from './compat.ts';
import { queryOptions, shownOptions, withRouteTarget } from './route-target.ts';

export const THROUGHPUT_HTTP_OPTIONS = { ...queryOptions(THROUGHPUT_OPTIONS), samplesCap: COMPAT_OPTIONS.samplesCap, shard: COMPAT_OPTIONS.shard, channel: CLIENT_COMPAT_OPTIONS.channel, acProtocol: CLIENT_COMPAT_OPTIONS.acProtocol } as const satisfies OptionTable;

export const throughputEntry: BenchEntry = {
  test: 'throughput',
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: THROUGHPUT_HTTP_OPTIONS,
  doc: "the benchmark's fan-out test: total messages x n clients through a publisher pool; deliveries/s",
  prepare(values, t) {
    const { samplesCap, shard, channel, acProtocol, ...q } = parseOptions(THROUGHPUT_HTTP_OPTIONS, { values, origin: 'query' });
    checkClientCompat({ channel, acProtocol }, t.route, values);
    const opts = parseThroughputOptions({ values: withRouteTarget(q, t), origin: 'query' });
    return { opts: { opts, samplesCap }, effectiveParams: defined({ ...shownOptions(opts), target: t.route, targetSource: t.source, samplesCap, shard }), plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + 1000 + opts.total * opts.intervalMs + opts.drain * 1000 + 5000 };
  },
  run(o, t, ctx) {
    const { opts, samplesCap } = o as { opts: ThroughputOptions; samplesCap: number };
    // The benchmark's sorted-sample export, from the same histogram the result's percentiles use.
    return withResolvedTarget(t, async (url) => withSortedSamples(await runThroughput(opts, url, { signal: ctx.signal, log: ctx.log, progress: (p) => ctx.progress(p) }) as unknown as Record<string, unknown>, samplesCap));
  },
};
