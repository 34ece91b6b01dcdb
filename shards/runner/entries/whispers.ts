import { parseOptions, type OptionTable } from '../../../lib/options.ts';
import { WHISPERS_OPTIONS, parseWhispersOptions, type WhispersOptions } from '../../../runners/whispers/options.ts';
import { runWhispers } from '../../../runners/whispers/run.ts';
import { defined } from '../params.ts';
import { withResolvedTarget } from '../targets.ts';
import { withSortedSamples } from './bench-fields.ts';
import type { BenchEntry } from '../types.ts';
import { COMPAT_OPTIONS } from './compat.ts';

const { target: _t, url: _u, ...Q } = WHISPERS_OPTIONS;
export const WHISPERS_HTTP_OPTIONS = { ...Q, samplesCap: COMPAT_OPTIONS.samplesCap, shard: COMPAT_OPTIONS.shard } as const satisfies OptionTable;

export const whispersEntry: BenchEntry = {
  test: 'whispers',
  // A target whose protocol has no whispers answers 400 "not supported by this target" (RR_ERR_TARGET_UNSUPPORTED).
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: WHISPERS_HTTP_OPTIONS,
  doc: 'client-to-client messages through the server (replay, Socket.IO, ws); delivery and latency',
  prepare(values, t) {
    const { samplesCap, shard, ...q } = parseOptions(WHISPERS_HTTP_OPTIONS, { values, origin: 'query' });
    const opts = parseWhispersOptions({ values: defined({ ...q, target: t.server, url: t.url }), origin: 'query' });
    const { url: _1, ...shown } = opts;
    return { opts: { opts, samplesCap }, effectiveParams: defined({ ...shown, target: t.route, targetSource: t.source, samplesCap, shard }), plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + 500 + opts.duration * 1000 + opts.settle + 5000 };
  },
  run(o, t, ctx) {
    const { opts, samplesCap } = o as { opts: WhispersOptions; samplesCap: number };
    // The benchmark's sorted-sample export, from the same histogram the result's percentiles use.
    return withResolvedTarget(t, async (url) => withSortedSamples(await runWhispers(opts, url, { signal: ctx.signal, log: ctx.log, progress: (p) => ctx.progress(p) }) as unknown as Record<string, unknown>, samplesCap));
  },
};
