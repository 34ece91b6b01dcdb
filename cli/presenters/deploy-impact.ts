import { TARGET_NAMES } from '../../engine/targets/index.ts';
import { formatDeployImpact } from '../../runners/deploy-impact/table.ts';
import { deployImpactModule } from '../../runners/deploy-impact/module.ts';
import { presenter } from '../presenter.ts';

export const deployImpactCli = presenter(deployImpactModule, {
  usage: `--target <${TARGET_NAMES.join('|')}> [options] [--json]`,
  command: (o, r) => ({ values: { ...o }, seed: r.seed }),
  present: (r) => formatDeployImpact([r]),
  after: (r) => (r.publisher.ok ? undefined : `error RR_ERR_RESTART_FAILED: the publisher's restart failed: ${r.publisher.error}\n`),
});
