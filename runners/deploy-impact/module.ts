import type { OptionTable } from '../../lib/options.ts';
import { COMPAT_OPTIONS } from '../../shards/runner/adapters/compat.ts';
import { queryOptions, withRouteTarget } from '../../shards/runner/adapters/route-target.ts';
import { defineModule, phasedRun } from '../../engine/session/module.ts';
import { deployImpactReport } from '../avalanche/page.ts';
import { DELIVERY_MERGE } from '../../engine/session/results.ts';
import { checkDeployImpactOptions, DEPLOY_IMPACT_OPTIONS } from './options.ts';
import { deployImpactPlannedMs, runDeployImpact } from './run.ts';

export const DEPLOY_IMPACT_HTTP_OPTIONS = { ...queryOptions(DEPLOY_IMPACT_OPTIONS), shard: COMPAT_OPTIONS.shard } as const satisfies OptionTable;

export const deployImpactModule = defineModule({
  name: 'deploy-impact',
  doc: 'the publisher process is redeployed (killed and restarted) while clients listen; what the clients missed',
  options: DEPLOY_IMPACT_OPTIONS,
  validate: checkDeployImpactOptions,
  plannedMs: deployImpactPlannedMs,
  target: 'self',
  run: (o, ctx) => phasedRun(runDeployImpact(o, { signal: ctx.signal }), ctx),
  merge: [DELIVERY_MERGE],
  multi: { sharedStream: false },
  page: deployImpactReport,
  http: {
    options: DEPLOY_IMPACT_HTTP_OPTIONS,
    fromQuery(q, t) {
      const { shard, ...rest } = q;
      return { values: withRouteTarget(rest, t), echo: { shard } };
    },
  },
});
