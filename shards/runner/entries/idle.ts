import { parseOptions, type OptionTable } from '../../../lib/options.ts';
import { IDLE_OPTIONS, idleServiceArgs, parseIdleOptions, type IdleOptions } from '../../../runners/idle/options.ts';
import { runIdle } from '../../../runners/idle/run.ts';
import { LEAN_TARGETS } from '../../../runners/targets/lean.ts';
import { defined } from '../params.ts';
import { withResolvedTarget } from '../targets.ts';
import type { BenchEntry } from '../types.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat } from './compat.ts';

const { target: _t, url: _u, ...IDLE_QUERY } = IDLE_OPTIONS;
export const IDLE_HTTP_OPTIONS = { ...IDLE_QUERY, channel: CLIENT_COMPAT_OPTIONS.channel, acProtocol: CLIENT_COMPAT_OPTIONS.acProtocol } as const satisfies OptionTable;

export const idleEntry: BenchEntry = {
  test: 'idle',
  targets: [...LEAN_TARGETS.filter((t) => t !== 'anycable'), 'anycable'],
  options: IDLE_HTTP_OPTIONS,
  doc: 'idle capacity: n subscribed connections over worker processes, held; runner and target memory per connection',
  prepare(values, t) {
    const { channel, acProtocol, ...q } = parseOptions(IDLE_HTTP_OPTIONS, { values, origin: 'query' });
    checkClientCompat({ channel, acProtocol }, t.route, values);
    const opts = parseIdleOptions({ values: defined({ ...q, target: t.server, url: t.url }), origin: 'query' });
    const { url: _1, ...shown } = opts;
    return { opts, effectiveParams: defined({ ...shown, target: t.route, targetSource: t.source }), plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + opts.hold * 1000 + 15_000 };
  },
  run(o, t, ctx) {
    const opts = o as IdleOptions;
    return withResolvedTarget(
      t,
      async (url, svc) => ({ ...(await runIdle(opts, url, svc?.pid, { signal: ctx.signal, log: ctx.log, progress: (p) => ctx.progress(p) })) }),
      idleServiceArgs(opts),
    );
  },
};
