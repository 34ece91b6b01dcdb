import type { OptionTable } from '../../lib/options.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat } from '../../shards/runner/adapters/compat.ts';
import { defineModule } from '../../engine/session/module.ts';
import { idleReport } from './page.ts';
import { checkIdleOptions, IDLE_OPTIONS, idleServiceArgs } from './options.ts';
import { runIdle } from './run.ts';
import { IDLE_MERGE } from './shard-merge.ts';

const { target: _t, url: _u, ...IDLE_QUERY } = IDLE_OPTIONS;
export const IDLE_HTTP_OPTIONS = { ...IDLE_QUERY, channel: CLIENT_COMPAT_OPTIONS.channel, acProtocol: CLIENT_COMPAT_OPTIONS.acProtocol } as const satisfies OptionTable;

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
  http: {
    // The benchmark's idle routes; a Redis variant is measured with bench:idle --target <name>-redis.
    targets: ['replay', 'ws', 'uws', 'socketio', 'socketio-csr', 'anycable'],
    options: IDLE_HTTP_OPTIONS,
    fromQuery(q, t, given) {
      const { channel, acProtocol, ...rest } = q;
      checkClientCompat({ channel, acProtocol }, t.route, given);
      return { values: { ...rest, target: t.server, url: t.url } };
    },
  },
});
