import { defineModule, phasedRun } from '../../engine/session/module.ts';
import { avalancheReport } from './page.ts';
import { DELIVERY_MERGE, LOSS_MERGE } from '../../engine/session/results.ts';
import { AVALANCHE_OPTIONS, checkAvalancheOptions } from './options.ts';
import { restartConfigFromEnv } from '../../engine/measure/restart.ts';
import { avalanchePlannedMs, runAvalanche } from './run.ts';

export const avalancheModule = defineModule({
  name: 'avalanche',
  doc: 'one forced restart of the target (kill, term, rolling, or the operator-configured command/hook) under a fixed publish rate; the reconnect herd and what was lost',
  options: AVALANCHE_OPTIONS,
  validate(v) {
    const config = restartConfigFromEnv();
    return { opts: checkAvalancheOptions(v, config), config };
  },
  plannedMs: ({ opts }) => avalanchePlannedMs(opts),
  target: 'self',
  targetOf: ({ opts }) => ({ name: opts.target, url: opts.url }),
  run: ({ opts, config }, ctx) => phasedRun(runAvalanche(opts, config, { signal: ctx.signal }), ctx),
  merge: [DELIVERY_MERGE, LOSS_MERGE, { max: ['rampElapsedMs', 'totalElapsedMs'], counts: ['initiallyConnected'], nonNegative: ['rampElapsedMs', 'totalElapsedMs'] }],
  multi: { sharedStream: false },
  page: avalancheReport,
});
