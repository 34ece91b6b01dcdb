import type { OptionTable } from '../../../lib/options.ts';
import { defined } from '../params.ts';
import type { ResolvedTarget } from '../types.ts';

/** Options the route decides (which target, where to reach it, its broadcast key), never the query. */
type RouteOwned = 'target' | 'url' | 'broadcastUrl' | 'broadcastKey';

/** A runner's CLI option table as a bench route's query sees it: without the route-owned names. */
export function queryOptions<T extends OptionTable>(table: T): Omit<T, RouteOwned> {
  const { target: _t, url: _u, broadcastUrl: _b, broadcastKey: _k, ...q } = table;
  return q;
}

/** The runner's option values: the parsed query plus the route's resolved target. */
export function withRouteTarget(query: Record<string, unknown>, t: ResolvedTarget): Record<string, unknown> {
  return defined({ ...query, target: t.server, url: t.url, broadcastUrl: t.broadcastUrl, broadcastKey: t.broadcastKey });
}

/** A result as the shard returns it: an operator's broadcast key never leaves in `params`. */
export function redactBroadcastKey(result: unknown): Record<string, unknown> {
  const r = result as Record<string, unknown>;
  const params = r.params as Record<string, unknown> | undefined;
  return params?.broadcastKey ? { ...r, params: { ...params, broadcastKey: '<redacted>' } } : r;
}
