import { formatDeployImpact } from '../avalanche/report.ts';
import { defineModule, phasedRun } from '../../engine/session/module.ts';
import { TARGET_NAMES } from '../../engine/targets/index.ts';
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
  multi: { sharedStream: false },
  cli: {
    usage: `--target <${TARGET_NAMES.join('|')}> [options] [--json]`,
    json: 'flag',
    command: (o, r) => ({ values: { ...o }, seed: r.seed }),
    present: (r) => formatDeployImpact([r]),
    after: (r) => (r.publisher.ok ? undefined : `error RR_ERR_RESTART_FAILED: the publisher's restart failed: ${r.publisher.error}\n`),
  },
});
