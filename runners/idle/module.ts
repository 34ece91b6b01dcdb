import { defineModule } from '../../engine/session/module.ts';
import { idleReport } from './page.ts';
import { checkIdleOptions, IDLE_OPTIONS, idleServiceArgs } from './options.ts';
import { runIdle } from './run.ts';
import { IDLE_MERGE } from './shard-merge.ts';

export const idleModule = defineModule({
  name: 'idle',
  doc: 'idle capacity: n subscribed connections over worker processes, held; runner and target memory per connection',
  options: IDLE_OPTIONS,
  validate: checkIdleOptions,
  plannedMs: (o) => Math.ceil((o.clients * 1000) / o.ramp) + o.hold * 1000 + 15_000,
  serviceArgs: idleServiceArgs,
  run: (o, ctx) => runIdle(o, ctx.url!, ctx.service?.pid, { signal: ctx.signal, log: ctx.log, progress: ctx.progress }),
  summary: ['clients', 'connected', 'subscribed', 'failed'],
  merge: [IDLE_MERGE],
  multi: { sharedStream: false },
  page: idleReport,
});
