import { parseOptions, type OptionTable } from '../../../lib/options.ts';
import { AVALANCHE_OPTIONS, parseAvalancheOptions, restartConfigFromEnv, type AvalancheOptions } from '../../../runners/avalanche/options.ts';
import { runAvalanche } from '../../../runners/avalanche/run.ts';
import { defined } from '../params.ts';
import { annotateRun } from '../targets.ts';
import type { BenchEntry } from '../types.ts';
import { ReboundError } from '../../../lib/errors.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from './compat.ts';
import { queryOptions, relayPhases, shownOptions, withRouteTarget } from './route-target.ts';

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

export const avalancheEntry: BenchEntry = {
  test: 'avalanche',
  targets: ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable'],
  options: AVALANCHE_HTTP_OPTIONS,
  doc: 'one forced restart of the target (kill, term, rolling, or the operator-configured command/hook) under a fixed publish rate; the reconnect herd and what was lost',
  prepare(values, t) {
    const { shard, channel, acProtocol, clientLib, reconnectBaseMs, prearm, recoveryWait, ...rest } = parseOptions(AVALANCHE_HTTP_OPTIONS, { values, origin: 'query' });
    // Every avalanche client backs off (the library's or the runner's loop), so the base applies on every target.
    checkClientCompat({ channel, acProtocol, clientLib, reconnectBaseMs, reconnectStrategy: rest.reconnectStrategy }, t.route, values);
    for (const [k, other, given] of [['prearm', 'warmupMs', prearm], ['recoveryWait', 'recoveryTimeoutMs', recoveryWait]] as const) {
      const names = k === 'prearm' ? ['warmupMs', 'warmup-ms'] : ['recoveryTimeoutMs', 'recovery-timeout-ms', 'recovery-wait-ms'];
      if (given && names.some((n) => n in values)) throw new ReboundError('RR_ERR_OPTION_INVALID', `query options "${k}" and "${other}" set the same thing: give one`, { details: { option: k } });
    }
    const q = { ...rest, reconnectBaseMs, ...(prearm ? { warmupMs: prearm * 1000 } : {}), ...(recoveryWait ? { recoveryTimeoutMs: recoveryWait * 1000 } : {}) };
    const config = restartConfigFromEnv();
    const opts = parseAvalancheOptions({ values: withRouteTarget(q, t), origin: 'query' }, config);
    return {
      opts: { opts, config },
      effectiveParams: defined({ ...shownOptions(opts), target: t.route, targetSource: t.source, shard, prearm: prearm || undefined, recoveryWait: recoveryWait || undefined }),
      plannedMs: Math.ceil((opts.clients * 1000) / opts.ramp) + opts.warmupMs + Math.max(opts.publishAfterMs, opts.recoveryTimeoutMs) + opts.settleMs + 10_000,
    };
  },
  run(o, t, ctx) {
    const { opts, config } = o as { opts: AvalancheOptions; config: ReturnType<typeof restartConfigFromEnv> };
    return annotateRun(t, () => relayPhases(runAvalanche(opts, config, { signal: ctx.signal }), ctx));
  },
};
