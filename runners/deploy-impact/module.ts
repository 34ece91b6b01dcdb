import type { OptionTable } from '../../lib/options.ts';
import { COMPAT_OPTIONS } from '../../shards/runner/adapters/compat.ts';
import { queryOptions, withRouteTarget } from '../../shards/runner/adapters/route-target.ts';
import { formatDeployImpact } from '../avalanche/table.ts';
import { defineModule, phasedRun } from '../../engine/session/module.ts';
import { TARGET_NAMES } from '../../engine/targets/index.ts';
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
  multi: { sharedStream: false },
  cli: {
    usage: `--target <${TARGET_NAMES.join('|')}> [options] [--json]`,
    json: 'flag',
    command: (o, r) => ({ values: { ...o }, seed: r.seed }),
    present: (r) => formatDeployImpact([r]),
    after: (r) => (r.publisher.ok ? undefined : `error RR_ERR_RESTART_FAILED: the publisher's restart failed: ${r.publisher.error}\n`),
  },
  http: {
    options: DEPLOY_IMPACT_HTTP_OPTIONS,
    fromQuery(q, t) {
      const { shard, ...rest } = q;
      return { values: withRouteTarget(rest, t), echo: { shard } };
    },
  },
});
