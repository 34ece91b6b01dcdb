import { defineModule } from '../../../engine/session/module.ts';
import { getTarget } from '../../../engine/targets/index.ts';
import { checkSoakOptions, SOAK_OPTIONS } from './options.ts';
import { runSoak, soakPlannedMs } from './run.ts';

/**
 * One soak against one target, each pass/fail rule judged over its health series (the CLI:
 * cli/presenters/soak.ts). The capacity suite runs the same module as `--scenarios soak`.
 */
export const soakModule = defineModule({
  name: 'soak',
  doc: 'steady traffic for durationSec against one target, a health sample every sampleSec, each pass/fail rule judged over the series (seeds/002)',
  options: SOAK_OPTIONS,
  validate: checkSoakOptions,
  plannedMs: soakPlannedMs,
  target: 'self',
  run: (o, ctx) => runSoak({ target: getTarget(o.target), ...(o.url ? { url: o.url } : {}), seed: 0, signal: ctx.signal, log: ctx.log, progress: ctx.progress }, o),
});
