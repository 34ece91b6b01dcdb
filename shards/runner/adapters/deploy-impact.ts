import type { OptionTable } from '../../../lib/options.ts';
import { deployImpactModule } from '../../../runners/deploy-impact/module.ts';
import { DEPLOY_IMPACT_OPTIONS } from '../../../runners/deploy-impact/options.ts';
import { defineAdapter } from './adapter.ts';
import { COMPAT_OPTIONS } from './compat.ts';
import { queryOptions, withRouteTarget } from './route-target.ts';

export const DEPLOY_IMPACT_HTTP_OPTIONS = { ...queryOptions(DEPLOY_IMPACT_OPTIONS), shard: COMPAT_OPTIONS.shard } as const satisfies OptionTable;

export const deployImpactAdapter = defineAdapter(deployImpactModule, {
  options: DEPLOY_IMPACT_HTTP_OPTIONS,
  fromQuery(q, t) {
    const { shard, ...rest } = q;
    return { values: withRouteTarget(rest, t), echo: { shard } };
  },
});
