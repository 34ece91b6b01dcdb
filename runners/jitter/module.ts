import { ReboundError } from '../../lib/errors.ts';
import type { OptionTable } from '../../lib/options.ts';
import { benchmarkFields } from '../../shards/runner/adapters/bench-fields.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from '../../shards/runner/adapters/compat.ts';
import { queryOptions, withRouteTarget } from '../../shards/runner/adapters/route-target.ts';
import { defineModule, shownOptions } from '../../engine/session/module.ts';
import { TARGET_NAMES } from '../../engine/targets/index.ts';
import { checkJitterOptions, JITTER_OPTIONS, type JitterOptions } from './options.ts';
import { formatProgress, type JitterProgress } from './progress.ts';
import { formatComparison } from './table.ts';
import { jitterPlannedMs, runJitter } from './run.ts';
import { runJitterWorkers } from './workers.ts';

/** The engine's table plus the runner worker processes (each runs its share of the clients). */
const JITTER_CLI_OPTIONS = {
  ...JITTER_OPTIONS,
  workers: { type: 'int', default: 1, min: 1, max: 64, env: ['JITTER_WORKERS'], doc: 'runner worker processes; each runs its share of the clients on <stream>-w<i>, results merged exactly' },
} as const satisfies OptionTable;

// The URL options and the target are the route's business, never the query's.
const { toxiproxyUrl: _x, reconnectStrategy, ...JITTER_QUERY } = queryOptions(JITTER_OPTIONS);
const PER_PROCESS = JITTER_OPTIONS.clients.max;

/** The jitter CLI's table as the HTTP surface sees it, plus the benchmark's names. */
const JITTER_HTTP_OPTIONS = {
  ...JITTER_QUERY,
  // One process holds at most JITTER_OPTIONS.clients.max clients; workers multiply that.
  clients: { ...JITTER_QUERY.clients, max: PER_PROCESS * 64, doc: `concurrent clients (at most ${PER_PROCESS} per worker process: raise workers beyond)` },
  reconnectStrategy: { ...reconnectStrategy, aliases: ['reconnectMode'] },
  samplesCap: COMPAT_OPTIONS.samplesCap,
  label: COMPAT_OPTIONS.label,
  ...CLIENT_COMPAT_OPTIONS,
  shard: COMPAT_OPTIONS.shard,
  workers: { type: 'int', default: 1, min: 1, max: 64, doc: 'runner worker processes: clients are split over them, each on its own stream <stream>-w<i> with its own publisher (the benchmark\'s multi-shard layout), results merged exactly' },
} as const satisfies OptionTable;

export const jitterModule = defineModule({
  name: 'jitter',
  doc: 'client drops (or a chaos plan via plan=) while publishing; delivery ledger, latency, recovery',
  options: JITTER_CLI_OPTIONS,
  validate(v) {
    const { workers, ...j } = v;
    const perWorker = Math.ceil(j.clients / workers);
    if (perWorker > PER_PROCESS) throw new ReboundError('RR_ERR_OPTION_INVALID', `clients per worker process (${perWorker}) exceeds ${PER_PROCESS}: raise workers`, { details: { option: 'clients' } });
    // Validated as one worker's share (the ledger cap and every other rule apply per process).
    const jitter: JitterOptions = { ...checkJitterOptions({ ...j, clients: perWorker }), clients: j.clients };
    if (jitter.subscribeOnly && workers > 1) throw new ReboundError('RR_ERR_OPTION_INVALID', 'subscribe-only shards run one worker (workers put each worker on its own stream, a shared stream has one)', { details: { option: 'workers' } });
    if (workers > jitter.clients) throw new ReboundError('RR_ERR_OPTION_INVALID', `workers (${workers}) exceeds clients (${jitter.clients})`, { details: { option: 'workers' } });
    return { jitter, workers };
  },
  plannedMs: ({ jitter }) => jitterPlannedMs(jitter),
  targetOf: ({ jitter }) => ({ name: jitter.target, url: jitter.url }),
  async run({ jitter, workers }, ctx) {
    const targetPid = ctx.service?.pid;
    if (workers > 1) return runJitterWorkers(jitter, ctx.url!, workers, { signal: ctx.signal, phase: ctx.phase, progress: ctx.progress, targetPid });
    const run = runJitter(jitter, ctx.url!, { targetPid, signal: ctx.signal });
    run.events.on('phase', ctx.phase);
    run.events.on('progress', ctx.progress);
    return run.result;
  },
  summary: ['clients', 'totalMessages', 'expectedDeliveries', 'receivedDeliveries', 'lostDeliveries'],
  multi: { sharedStream: true },
  cli: {
    usage: `--target <${TARGET_NAMES.join('|')}> [options] [--json]`,
    json: 'flag',
    abortNote: 'stopping the run; the partial result will be written, flagged ABORTED',
    command: (o, r) => ({ values: { ...r.params, workers: o.workers } }),
    present: (r) => formatComparison([r]),
    progressLine: (p, o) => formatProgress(o.jitter.target, p as unknown as JitterProgress),
  },
  http: {
    options: JITTER_HTTP_OPTIONS,
    fromQuery(q, t, given) {
      const { samplesCap, label, shard, workers, channel, acProtocol, clientLib, reconnectBaseMs, ...j } = q;
      checkClientCompat({ channel, acProtocol, clientLib, reconnectBaseMs, reconnectStrategy: j.reconnectStrategy, backoffApplies: t.definition.reconnect === 'library' }, t.route, given);
      return {
        values: withRouteTarget({ ...j, reconnectBaseMs, workers }, t),
        echo: { samplesCap, label, shard, workers },
        post: { samplesCap, label },
      };
    },
    shown: (o) => shownOptions(o.jitter),
    finish: benchmarkFields,
  },
});

/** The module's options: the engine's (validated as one worker's share) and the worker count. */
export type JitterModuleOptions = ReturnType<typeof jitterModule.validate>;
