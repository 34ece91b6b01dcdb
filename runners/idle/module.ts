import { defineModule } from '../../engine/session/module.ts';
import { LEAN_TARGETS } from '../../engine/targets/index.ts';
import { checkIdleOptions, IDLE_OPTIONS, idleServiceArgs } from './options.ts';
import { runIdle, type IdleProgress } from './run.ts';

export const idleModule = defineModule({
  name: 'idle',
  doc: 'idle capacity: n subscribed connections over worker processes, held; runner and target memory per connection',
  options: IDLE_OPTIONS,
  validate: checkIdleOptions,
  plannedMs: (o) => Math.ceil((o.clients * 1000) / o.ramp) + o.hold * 1000 + 15_000,
  serviceArgs: idleServiceArgs,
  run: (o, ctx) => runIdle(o, ctx.url!, ctx.service?.pid, { signal: ctx.signal, log: ctx.log, progress: ctx.progress }),
  summary: ['clients', 'connected', 'subscribed', 'failed'],
  multi: { sharedStream: false },
  cli: {
    usage: `--target <${LEAN_TARGETS.join('|')}> [options]`,
    json: 'always',
    // The series is in the results file; stdout says where instead of printing thousands of points.
    jsonView: (r, file) => ({ ...r, targetMetrics: { ...r.targetMetrics, series: `${r.targetMetrics.series.length} points (in ${file})` } }),
    logLine: (l) => l,
    progressLine: (p, o) => {
      const x = p as IdleProgress;
      return `[${o.target}] ${x.phase}: attempted ${x.attempted}, subscribed ${x.subscribed}, failed ${x.failed}, open ${x.open}`;
    },
  },
});
