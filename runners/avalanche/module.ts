import { ReboundError } from '../../lib/errors.ts';
import { defineModule, phasedRun, resultName } from '../../engine/session/module.ts';
import { TARGET_NAMES } from '../../engine/targets/index.ts';
import { AVALANCHE_OPTIONS, checkAvalancheOptions, restartConfigFromEnv } from './options.ts';
import { formatAvalanche, restartFailureLine } from './report.ts';
import { avalanchePlannedMs, runAvalanche } from './run.ts';

const ENV_HELP = `  restart configuration (environment only, never from a request):
    AVALANCHE_RESTART_COMMAND      shell command for --restart command (gets REBOUND_TARGET_URLS, REBOUND_TARGET_PIDS)
    AVALANCHE_RESTART_HOOK_URL     URL POSTed for --restart hook; AVALANCHE_RESTART_HOOK_TOKEN: its bearer
    AVALANCHE_RESTART_TIMEOUT_MS   give up on the command or hook after this long (default 120000)`;

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
  multi: { sharedStream: false },
  cli: {
    usage: `--target <${TARGET_NAMES.join('|')}> --restart <mode> [options] [--json]`,
    helpExtra: ENV_HELP,
    json: 'flag',
    fileName: (o, r) => resultName('avalanche', r.target, o.opts.restart),
    command: (o, r) => ({ values: { ...o.opts }, seed: r.seed }),
    present: (r) => formatAvalanche([r]),
    after: (r) => restartFailureLine(r),
  },
});
