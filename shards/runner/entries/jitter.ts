import { parseOptions, type OptionTable, type OptionValues } from '../../../lib/options.ts';
import { JITTER_OPTIONS, parseJitterOptions, type JitterOptions } from '../../../runners/jitter/options.ts';
import { runJitter } from '../../../runners/jitter/run.ts';
import { defined } from '../params.ts';
import { withResolvedTarget } from '../targets.ts';
import type { BenchEntry, JobProgress } from '../types.ts';
import { COMPAT_OPTIONS } from './compat.ts';

// The URL options and the target are the route's business, never the query's.
const { target: _t, url: _u, broadcastUrl: _b, toxiproxyUrl: _x, broadcastKey: _k, reconnectStrategy, ...JITTER_QUERY } = JITTER_OPTIONS;

/** The jitter CLI's table as the HTTP surface sees it, plus the benchmark's names. */
export const JITTER_HTTP_OPTIONS = {
  ...JITTER_QUERY,
  reconnectStrategy: { ...reconnectStrategy, aliases: ['reconnectMode'] },
  duration: COMPAT_OPTIONS.duration,
  samplesCap: COMPAT_OPTIONS.samplesCap,
  shard: COMPAT_OPTIONS.shard,
} as const satisfies OptionTable;

export const jitterEntry: BenchEntry = {
  test: 'jitter',
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: JITTER_HTTP_OPTIONS,
  doc: 'client drops (or a chaos plan via plan=) while publishing; delivery ledger, latency, recovery',
  prepare(values, t) {
    const q: OptionValues<typeof JITTER_HTTP_OPTIONS> = parseOptions(JITTER_HTTP_OPTIONS, { values, origin: 'query' });
    const { duration, samplesCap, shard, ...j } = q;
    const opts = parseJitterOptions({ values: defined({ ...j, target: t.definition.name, url: t.url, broadcastUrl: t.broadcastUrl, broadcastKey: t.broadcastKey }), origin: 'query' });
    const { url: _1, broadcastUrl: _2, broadcastKey: _3, toxiproxyUrl: _4, ...shown } = opts;
    return {
      opts,
      effectiveParams: defined({ ...shown, target: t.route, targetSource: t.source, duration: duration || undefined, samplesCap, shard }),
      plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + 1000 + opts.msgs * opts.interval + opts.settle + 5000,
    };
  },
  run(o, t, ctx) {
    const opts = o as JitterOptions;
    return withResolvedTarget(t, (url) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        let last: JobProgress = { phase: 'connect' };
        const run = runJitter(opts, url);
        run.events.on('phase', (name, detail) => {
          ctx.log(`${name}: ${detail}`);
          ctx.progress((last = { ...last, phase: name }));
        });
        run.events.on('progress', (p) => ctx.progress((last = { ...p })));
        run.result.then((r) => resolve(redactKey(r as unknown as Record<string, unknown>)), reject);
        // runJitter has no abort hook yet: hand back the last progress as the partial result;
        // the service exits right after, which closes the clients' sockets.
        ctx.signal.addEventListener('abort', () => resolve({ test: 'jitter', target: t.route, aborted: true, partial: true, progress: last }), { once: true });
      }),
    );
  },
};

/** The broadcast key comes from the operator's env; results are shared, so it never appears in them. */
function redactKey(r: Record<string, unknown>): Record<string, unknown> {
  const params = r.params as Record<string, unknown> | undefined;
  if (params && typeof params.broadcastKey === 'string' && params.broadcastKey !== '') return { ...r, params: { ...params, broadcastKey: '<redacted>' } };
  return r;
}
