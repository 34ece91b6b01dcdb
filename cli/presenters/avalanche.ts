import { resultName } from '../../engine/session/module.ts';
import { TARGET_NAMES } from '../../engine/targets/index.ts';
import { avalancheModule } from '../../runners/avalanche/module.ts';
import { formatAvalanche, restartFailureLine } from '../../runners/avalanche/table.ts';
import { presenter } from '../presenter.ts';

const ENV_HELP = `  restart configuration (environment only, never from a request):
    AVALANCHE_RESTART_COMMAND      shell command for --restart command (gets REBOUND_TARGET_URLS, REBOUND_TARGET_PIDS)
    AVALANCHE_RESTART_HOOK_URL     URL POSTed for --restart hook; AVALANCHE_RESTART_HOOK_TOKEN: its bearer
    AVALANCHE_RESTART_TIMEOUT_MS   give up on the command or hook after this long (default 120000)`;

export const avalancheCli = presenter(avalancheModule, {
  usage: `--target <${TARGET_NAMES.join('|')}> --restart <mode> [options] [--json]`,
  helpExtra: ENV_HELP,
  fileName: (o, r) => resultName('avalanche', r.target, o.opts.restart),
  command: (o, r) => ({ values: { ...o.opts }, seed: r.seed }),
  present: (r) => formatAvalanche([r]),
  after: (r) => restartFailureLine(r),
});
