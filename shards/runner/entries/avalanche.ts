import { parseOptions, type OptionTable } from '../../../lib/options.ts';
import { AVALANCHE_OPTIONS, parseAvalancheOptions, restartConfigFromEnv, type AvalancheOptions } from '../../../runners/avalanche/options.ts';
import { runAvalanche } from '../../../runners/avalanche/run.ts';
import { defined } from '../params.ts';
import { annotateRun } from '../targets.ts';
import type { BenchEntry } from '../types.ts';
import { COMPAT_OPTIONS } from './compat.ts';
import { queryOptions, relayPhases, shownOptions, withRouteTarget } from './route-target.ts';

// The runner starts and restarts local targets itself; URLs, the broadcast key and the restart
// command or hook come from the operator's env only.
export const AVALANCHE_HTTP_OPTIONS = { ...queryOptions(AVALANCHE_OPTIONS), shard: COMPAT_OPTIONS.shard } as const satisfies OptionTable;

export const avalancheEntry: BenchEntry = {
  test: 'avalanche',
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: AVALANCHE_HTTP_OPTIONS,
  doc: 'one forced restart of the target (kill, term, rolling, or the operator-configured command/hook) under a fixed publish rate; the reconnect herd and what was lost',
  prepare(values, t) {
    const { shard, ...q } = parseOptions(AVALANCHE_HTTP_OPTIONS, { values, origin: 'query' });
    const config = restartConfigFromEnv();
    const opts = parseAvalancheOptions({ values: withRouteTarget(q, t), origin: 'query' }, config);
    return {
      opts: { opts, config },
      effectiveParams: defined({ ...shownOptions(opts), target: t.route, targetSource: t.source, shard }),
      plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + opts.warmupMs + Math.max(opts.publishAfterMs, opts.recoveryTimeoutMs) + opts.settleMs + 10_000,
    };
  },
  run(o, t, ctx) {
    const { opts, config } = o as { opts: AvalancheOptions; config: ReturnType<typeof restartConfigFromEnv> };
    return annotateRun(t, () => relayPhases(runAvalanche(opts, config, { signal: ctx.signal }), ctx));
  },
};
