import { ReboundError } from '../../lib/errors.ts';
import type { OptionTable } from '../../lib/options.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from '../../shards/runner/adapters/compat.ts';
import { queryOptions, withRouteTarget } from '../../shards/runner/adapters/route-target.ts';
import { defineModule, phasedRun, resultName, shownOptions } from '../../engine/session/module.ts';
import { TARGET_NAMES } from '../../engine/targets/index.ts';
import { AVALANCHE_OPTIONS, checkAvalancheOptions, restartConfigFromEnv } from './options.ts';
import { formatAvalanche, restartFailureLine } from './table.ts';
import { avalanchePlannedMs, runAvalanche } from './run.ts';

// The runner starts and restarts local targets itself; URLs, the broadcast key and the restart
// command or hook come from the operator's env only.
const AQ = queryOptions(AVALANCHE_OPTIONS);
export const AVALANCHE_HTTP_OPTIONS = {
  ...AQ,
  reconnectStrategy: { ...AQ.reconnectStrategy, aliases: ['reconnectMode'] },
  shard: COMPAT_OPTIONS.shard,
  ...CLIENT_COMPAT_OPTIONS,
  prearm: { type: 'int', default: 0, min: 0, max: 600, doc: "the benchmark's wait for the restart, s: Rebound restarts the target itself when it ends (publishing before the restart = warmupMs); 0 = warmupMs as given" },
  recoveryWait: { type: 'int', default: 0, min: 0, max: 900, doc: "the benchmark's recovery timeout, s: after the restart, wait at most this long for the clients (recoveryTimeoutMs); 0 = recoveryTimeoutMs as given" },
} as const satisfies OptionTable;

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
  http: {
    options: AVALANCHE_HTTP_OPTIONS,
    fromQuery(q, t, given) {
      const { shard, channel, acProtocol, clientLib, reconnectBaseMs, prearm, recoveryWait, ...rest } = q;
      // Every avalanche client backs off (the library's or the runner's loop), so the base applies on every target.
      checkClientCompat({ channel, acProtocol, clientLib, reconnectBaseMs, reconnectStrategy: rest.reconnectStrategy }, t.route, given);
      for (const [k, other, value] of [['prearm', 'warmupMs', prearm], ['recoveryWait', 'recoveryTimeoutMs', recoveryWait]] as const) {
        const names = k === 'prearm' ? ['warmupMs', 'warmup-ms'] : ['recoveryTimeoutMs', 'recovery-timeout-ms', 'recovery-wait-ms'];
        if (value && names.some((n) => n in given)) throw new ReboundError('RR_ERR_OPTION_INVALID', `query options "${k}" and "${other}" set the same thing: give one`, { details: { option: k } });
      }
      const v: Record<string, unknown> = { ...rest, reconnectBaseMs, ...(prearm ? { warmupMs: prearm * 1000 } : {}), ...(recoveryWait ? { recoveryTimeoutMs: recoveryWait * 1000 } : {}) };
      const config = restartConfigFromEnv();
      // A target the runner did not start (a request's serverUrl/cableUrl/wsUrl, or TARGET_<NAME>_URL)
      // can only be restarted the operator's way: the benchmark's "the caller redeploys it during
      // prearm" becomes the operator's AVALANCHE_RESTART_COMMAND (e.g. `railway service redeploy`) or
      // hook, run when prearm ends. Without either, say so instead of the CLI's --restart wording.
      if (t.url !== undefined && !('restart' in given)) {
        if (config.command) v.restart = 'command';
        else if (config.hookUrl) v.restart = 'hook';
        else throw new ReboundError('RR_ERR_OPTION_INVALID', `avalanche against a target this runner did not start (${t.source === 'request' ? 'the request\'s target URL' : 'TARGET_' + t.route.toUpperCase().replace(/[^A-Z0-9]/g, '_') + '_URL'}) needs the operator's restart: Rebound restarts the target itself when prearm ends, and it can restart a server it did not start only with AVALANCHE_RESTART_COMMAND or AVALANCHE_RESTART_HOOK_URL in the runner's environment (the benchmark's "the caller redeploys the target" has no request-side counterpart here); without a target URL the runner starts and restarts its local ${t.server} itself`, { details: { option: 'restart' } });
      }
      return { values: withRouteTarget(v, t), echo: { shard, prearm: prearm || undefined, recoveryWait: recoveryWait || undefined } };
    },
    shown: (o) => shownOptions(o.opts),
  },
});
