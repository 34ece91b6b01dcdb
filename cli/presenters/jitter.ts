import { TARGET_NAMES } from '../../engine/targets/index.ts';
import { jitterModule } from '../../runners/jitter/module.ts';
import { formatProgress, type JitterProgress } from '../../runners/jitter/progress.ts';
import { formatComparison } from '../../runners/jitter/table.ts';
import { presenter } from '../presenter.ts';

export const jitterCli = presenter(jitterModule, {
  usage: `--target <${TARGET_NAMES.join('|')}> [options] [--json]`,
  abortNote: 'stopping the run; the partial result will be written, flagged ABORTED',
  command: (o, r) => ({ values: { ...r.params, workers: o.workers } }),
  present: (r) => formatComparison([r]),
  progressLine: (p, o) => formatProgress(o.jitter.target, p as unknown as JitterProgress),
});
