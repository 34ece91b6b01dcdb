import { ReboundError } from '../../lib/errors.ts';
import type { OptionTable } from '../../lib/options.ts';
import { defineModule } from '../../engine/session/module.ts';
import { jitterReport } from './page.ts';
import { DELIVERY_MERGE, LOSS_MERGE, pct } from '../../engine/session/results.ts';
import { checkJitterOptions, JITTER_OPTIONS, type JitterOptions } from './options.ts';
import { jitterPlannedMs, runJitter } from './run.ts';
import { runJitterWorkers } from './workers.ts';
import { parseWeather } from '../../chaos/weather/population.ts';
import { weatherProblem } from './weather.ts';

/** The engine's table plus the runner worker processes (each runs its share of the clients). */
const JITTER_CLI_OPTIONS = {
  ...JITTER_OPTIONS,
  workers: { type: 'int', default: 1, min: 1, max: 64, env: ['JITTER_WORKERS'], doc: 'runner worker processes; each runs its share of the clients on <stream>-w<i>, results merged exactly' },
} as const satisfies OptionTable;

const PER_PROCESS = JITTER_OPTIONS.clients.max;

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
    // One process holds the target and restarts it once; workers would each need it.
    if (workers > 1 && parseWeather(jitter.weather).some((w) => w.condition === 'deploy')) throw new ReboundError('RR_ERR_WEATHER_NEEDS_RESTART', `weather ${jitter.weather} has a deploy, which restarts the target once from the process that holds it: run it with --workers 1 (or spread clients over shards, where the publishing shard restarts it)`, { details: { option: 'workers' } });
    if (workers > jitter.clients) throw new ReboundError('RR_ERR_OPTION_INVALID', `workers (${workers}) exceeds clients (${jitter.clients})`, { details: { option: 'workers' } });
    return { jitter, workers };
  },
  plannedMs: ({ jitter }) => jitterPlannedMs(jitter),
  targetOf: ({ jitter }) => ({ name: jitter.target, url: jitter.url }),
  async run({ jitter, workers }, ctx) {
    const targetPid = ctx.service?.pid;
    if (workers > 1) return runJitterWorkers(jitter, ctx.url!, workers, { signal: ctx.signal, phase: ctx.phase, progress: ctx.progress, targetPid });
    const run = runJitter(jitter, ctx.url!, { targetPid, signal: ctx.signal, ...(ctx.nodes ? { nodes: ctx.nodes } : {}) });
    run.events.on('phase', ctx.phase);
    run.events.on('progress', ctx.progress);
    return run.result;
  },
  summary: ['clients', 'totalMessages', 'expectedDeliveries', 'receivedDeliveries', 'lostDeliveries'],
  merge: [
    DELIVERY_MERGE,
    LOSS_MERGE,
    {
      sum: ['jitterEvents', 'jitterSkipped', 'reconnects', 'reconnectFailures', 'csrResumes', 'historyRejected'],
      counts: ['jitterEvents', 'jitterSkipped', 'reconnects', 'reconnectFailures', 'historyRejected'],
      nullableCounts: ['csrResumes'],
      // The weather block's shape; each condition is then merged as a fleet of its own (shards/merge/merge.ts).
      check: weatherProblem,
      derive(merged, shards) {
        // null on every shard: the target has no connection-state recovery, so no rate either.
        if (merged.csrResumes !== undefined && shards.some((s) => s.result.csrResumes !== null)) merged.csrResumeRatePct = merged.reconnects ? pct(merged.csrResumes as number, merged.reconnects as number) : null;
      },
    },
  ],
  // A bad weather population is refused by the coordinator before any shard is asked; each shard deals its own slice by the same shares.
  multi: { sharedStream: true, checkQuery: (v) => void parseWeather(String(v.weather ?? '')) },
  page: jitterReport,
});

/** The module's options: the engine's (validated as one worker's share) and the worker count. */
export type JitterModuleOptions = ReturnType<typeof jitterModule.validate>;
