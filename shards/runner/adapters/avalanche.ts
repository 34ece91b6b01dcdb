import { ReboundError } from '../../../lib/errors.ts';
import type { OptionTable } from '../../../lib/options.ts';
import { avalancheModule } from '../../../runners/avalanche/module.ts';
import { AVALANCHE_OPTIONS } from '../../../runners/avalanche/options.ts';
import { restartConfigFromEnv } from '../../../engine/measure/restart.ts';
import { defineAdapter, shownOptions } from './adapter.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from './compat.ts';
import { queryOptions, withRouteTarget } from './route-target.ts';
import { envName } from '../targets.ts';

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

export const avalancheAdapter = defineAdapter(avalancheModule, {
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
      else throw new ReboundError('RR_ERR_OPTION_INVALID', `avalanche against a target this runner did not start (${t.source === 'request' ? 'the request\'s target URL' : `TARGET_${envName(t.route)}_URL`}) needs the operator's restart: Rebound restarts the target itself when prearm ends, and it can restart a server it did not start only with AVALANCHE_RESTART_COMMAND or AVALANCHE_RESTART_HOOK_URL in the runner's environment (the benchmark's "the caller redeploys the target" has no request-side counterpart here); without a target URL the runner starts and restarts its local ${t.server} itself`, { details: { option: 'restart' } });
    }
    return { values: withRouteTarget(v, t), echo: { shard, prearm: prearm || undefined, recoveryWait: recoveryWait || undefined } };
  },
  shown: (o) => shownOptions(o.opts),
});
