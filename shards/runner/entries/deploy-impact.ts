import { parseOptions, type OptionTable } from '../../../lib/options.ts';
import { DEPLOY_IMPACT_OPTIONS, parseDeployImpactOptions, type DeployImpactOptions } from '../../../runners/deploy-impact/options.ts';
import { runDeployImpact } from '../../../runners/deploy-impact/run.ts';
import { defined } from '../params.ts';
import { annotateRun } from '../targets.ts';
import type { BenchEntry } from '../types.ts';
import { COMPAT_OPTIONS } from './compat.ts';
import { queryOptions, relayPhases, shownOptions, withRouteTarget } from './route-target.ts';

export const DEPLOY_IMPACT_HTTP_OPTIONS = { ...queryOptions(DEPLOY_IMPACT_OPTIONS), shard: COMPAT_OPTIONS.shard } as const satisfies OptionTable;

export const deployImpactEntry: BenchEntry = {
  test: 'deploy-impact',
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: DEPLOY_IMPACT_HTTP_OPTIONS,
  doc: 'the publisher process is redeployed (killed and restarted) while clients listen; what the clients missed',
  prepare(values, t) {
    const { shard, ...q } = parseOptions(DEPLOY_IMPACT_HTTP_OPTIONS, { values, origin: 'query' });
    const opts = parseDeployImpactOptions({ values: withRouteTarget(q, t), origin: 'query' });
    return {
      opts,
      effectiveParams: defined({ ...shownOptions(opts), target: t.route, targetSource: t.source, shard }),
      plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + opts.warmupMs + opts.publisherDownMs + opts.publishAfterMs + opts.settleMs + 10_000,
    };
  },
  run(o, t, ctx) {
    return annotateRun(t, () => relayPhases(runDeployImpact(o as DeployImpactOptions, { signal: ctx.signal }), ctx));
  },
};
