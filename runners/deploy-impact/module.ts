import { defineModule, phasedRun } from '../../engine/session/module.ts';
import { deployImpactReport } from './page.ts';
import { DELIVERY_MERGE } from '../../engine/session/results.ts';
import { checkDeployImpactOptions, DEPLOY_IMPACT_OPTIONS } from './options.ts';
import { deployImpactPlannedMs, runDeployImpact } from './run.ts';

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
});
