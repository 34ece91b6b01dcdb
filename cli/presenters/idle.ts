import { LEAN_TARGETS } from '../../engine/targets/index.ts';
import { idleModule } from '../../runners/idle/module.ts';
import type { IdleProgress } from '../../runners/idle/run.ts';
import { presenter } from '../presenter.ts';

export const idleCli = presenter(idleModule, {
  usage: `--target <${LEAN_TARGETS.join('|')}> [options]`,
  json: 'always',
  // The series is in the results file; stdout says where instead of printing thousands of points.
  jsonView: (r, file) => ({ ...r, targetMetrics: { ...r.targetMetrics, series: `${r.targetMetrics.series.length} points (in ${file})` } }),
  logLine: (l) => l,
  progressLine: (p, o) => {
    const x = p as IdleProgress;
    return `[${o.target}] ${x.phase}: attempted ${x.attempted}, subscribed ${x.subscribed}, failed ${x.failed}, open ${x.open}`;
  },
});
