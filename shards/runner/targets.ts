import { ReboundError } from '../../lib/errors.ts';
import { withTarget } from '../../runners/core/local-target.ts';
import { isAllowedTargetUrl } from '../../runners/core/addresses.ts';
import { getTarget } from '../../runners/targets/index.ts';
import type { ServiceHandle } from '../../services/common/spawn.ts';
import type { ResolvedTarget } from './types.ts';

/** The benchmark's route names that map to a Rebound target of another name. */
const ROUTE_ALIASES: Record<string, string> = { uws: 'ws' };

/** `socketio-csr` → `SOCKETIO_CSR`: the env prefix of a target's configuration. */
export const envName = (target: string) => target.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/**
 * Targets by name only. The operator configures a remote target with `TARGET_<NAME>_URL`
 * (plus `TARGET_<NAME>_BROADCAST_URL` / `TARGET_<NAME>_BROADCAST_KEY`); without it the target's
 * local service is started for the run, as the CLI does. A request never carries a URL.
 */
export function resolveTarget(route: string, env: Record<string, string | undefined> = process.env): ResolvedTarget {
  const definition = getTarget(ROUTE_ALIASES[route] ?? route);
  const key = envName(route);
  const url = env[`TARGET_${key}_URL`] || undefined;
  const broadcastUrl = env[`TARGET_${key}_BROADCAST_URL`] || undefined;
  const broadcastKey = env[`TARGET_${key}_BROADCAST_KEY`] || undefined;
  for (const [name, v] of [[`TARGET_${key}_URL`, url], [`TARGET_${key}_BROADCAST_URL`, broadcastUrl]] as const) {
    if (v !== undefined && !isAllowedTargetUrl(v, env)) {
      throw new ReboundError('RR_ERR_OPTION_INVALID', `${name} must be a loopback URL unless REBOUND_ALLOW_REMOTE_TARGETS=1 (got ${JSON.stringify(v)})`, { details: { option: name } });
    }
  }
  if (!url && !definition.service) {
    throw new ReboundError('RR_ERR_TARGET_NOT_CONFIGURED', `target "${route}" has no local service on this runner: the operator sets TARGET_${key}_URL (and TARGET_${key}_BROADCAST_URL / TARGET_${key}_BROADCAST_KEY) to enable it`, { details: { target: route } });
  }
  return { route, definition, source: url ? 'configured' : 'local', ...(url ? { url } : {}), ...(broadcastUrl ? { broadcastUrl } : {}), ...(broadcastKey ? { broadcastKey } : {}) };
}

/** Run `fn` against the resolved target: its configured URL, or a local instance started for the run. */
export function withResolvedTarget<T>(t: ResolvedTarget, fn: (url: string, service?: ServiceHandle) => Promise<T>, serviceArgs?: string[]): Promise<T> {
  const def = serviceArgs && t.definition.service ? { ...t.definition, service: { ...t.definition.service, args: [...t.definition.service.args, ...serviceArgs] } } : t.definition;
  return withTarget(def, t.url, (url, svc) => fn(url, svc));
}
