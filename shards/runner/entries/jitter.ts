import type { JitterProgress } from '../../../runners/jitter/progress.ts';
import { ReboundError } from '../../../lib/errors.ts';
import { parseOptions, type OptionTable, type OptionValues } from '../../../lib/options.ts';
import { JITTER_OPTIONS, parseJitterOptions, type JitterOptions } from '../../../runners/jitter/options.ts';
import { dropWindowMs, runJitter } from '../../../runners/jitter/run.ts';
import { runJitterWorkers } from '../../../runners/jitter/workers.ts';
import { FIRST_MESSAGE_GRACE_MS, listenWindow } from '../../../runners/jitter/listen.ts';
import { defined } from '../params.ts';
import { withResolvedTarget } from '../targets.ts';
import type { BenchEntry, JobProgress } from '../types.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from './compat.ts';
import { benchmarkFields } from './bench-fields.ts';

// The URL options and the target are the route's business, never the query's.
const { target: _t, url: _u, broadcastUrl: _b, toxiproxyUrl: _x, broadcastKey: _k, reconnectStrategy, ...JITTER_QUERY } = JITTER_OPTIONS;

/** The jitter CLI's table as the HTTP surface sees it, plus the benchmark's names. */
export const JITTER_HTTP_OPTIONS = {
  ...JITTER_QUERY,
  // One process holds at most JITTER_OPTIONS.clients.max clients; workers multiply that.
  clients: { ...JITTER_QUERY.clients, max: JITTER_QUERY.clients.max * 64, doc: `concurrent clients (at most ${JITTER_QUERY.clients.max} per worker process: raise workers beyond)` },
  reconnectStrategy: { ...reconnectStrategy, aliases: ['reconnectMode'] },
  samplesCap: COMPAT_OPTIONS.samplesCap,
  label: COMPAT_OPTIONS.label,
  ...CLIENT_COMPAT_OPTIONS,
  shard: COMPAT_OPTIONS.shard,
  workers: { type: 'int', default: 1, min: 1, max: 64, doc: 'runner worker processes: clients are split over them, each on its own stream <stream>-w<i> with its own publisher (the benchmark\'s multi-shard layout), results merged exactly' },
} as const satisfies OptionTable;

export const jitterEntry: BenchEntry = {
  test: 'jitter',
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: JITTER_HTTP_OPTIONS,
  doc: 'client drops (or a chaos plan via plan=) while publishing; delivery ledger, latency, recovery',
  prepare(values, t) {
    const q: OptionValues<typeof JITTER_HTTP_OPTIONS> = parseOptions(JITTER_HTTP_OPTIONS, { values, origin: 'query' });
    const { samplesCap, label, shard, workers, channel, acProtocol, clientLib, reconnectBaseMs, ...j } = q;
    checkClientCompat({ channel, acProtocol, clientLib, reconnectBaseMs, reconnectStrategy: j.reconnectStrategy, backoffApplies: t.definition.reconnect === 'library' }, t.route, values);
    const perWorker = Math.ceil(j.clients / workers);
    if (perWorker > JITTER_QUERY.clients.max) throw new ReboundError('RR_ERR_OPTION_INVALID', `clients per worker process (${perWorker}) exceeds ${JITTER_QUERY.clients.max}: raise workers`, { details: { option: 'clients' } });
    // Validated as one worker's share (the ledger cap and every other rule apply per process).
    const share = parseJitterOptions({ values: defined({ ...j, reconnectBaseMs, clients: perWorker, target: t.server, url: t.url, broadcastUrl: t.broadcastUrl, broadcastKey: t.broadcastKey }), origin: 'query' });
    const opts: JitterOptions = { ...share, clients: j.clients };
    const { url: _1, broadcastUrl: _2, broadcastKey: _3, toxiproxyUrl: _4, ...shown } = opts;
    if (opts.subscribeOnly && workers > 1) throw new ReboundError('RR_ERR_OPTION_INVALID', 'subscribe-only shards run one worker (workers put each worker on its own stream, a shared stream has one)', { details: { option: 'workers' } });
    if (workers > opts.clients) throw new ReboundError('RR_ERR_OPTION_INVALID', `workers (${workers}) exceeds clients (${opts.clients})`, { details: { option: 'workers' } });
    return {
      opts: { jitter: opts, workers, samplesCap, label },
      effectiveParams: defined({ ...shown, target: t.route, targetSource: t.source, samplesCap, label, shard, workers }),
      plannedMs: opts.subscribeOnly ? listenWindow(opts).plannedMs + FIRST_MESSAGE_GRACE_MS : Math.ceil((opts.clients * 1000) / opts.ramp) + 1000 + Math.max(opts.msgs * opts.interval, dropWindowMs(opts)) + opts.settle + 5000,
    };
  },
  run(o, t, ctx) {
    const { jitter: opts, workers, samplesCap, label } = o as { jitter: JitterOptions; workers: number; samplesCap: number; label?: string };
    return withResolvedTarget(t, (url, svc) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        let last: JobProgress = { phase: 'connect' };
        const phase = (name: string, detail: string) => {
          ctx.log(`${name}: ${detail}`);
          ctx.progress((last = { ...last, phase: name }));
        };
        const progress = (p: JitterProgress) => ctx.progress((last = { ...p }));
        let result: Promise<unknown>;
        if (workers > 1) {
          result = runJitterWorkers(opts, url, workers, { signal: ctx.signal, phase, progress, ...(svc ? { targetPid: svc.pid } : {}) });
        } else {
          const run = runJitter(opts, url, { targetPid: svc?.pid, signal: ctx.signal });
          run.events.on('phase', phase);
          run.events.on('progress', progress);
          result = run.result;
        }
        result.then((r) => resolve(benchmarkFields(redactKey(r as Record<string, unknown>), { route: t.route, server: t.server, label, samplesCap })), reject);
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
