import type { OptionTable, OptionValues } from '../../../lib/options.ts';
import type { AnyRunnerModule, RunnerModule } from '../../../engine/session/module.ts';
import type { ResolvedTarget } from '../types.ts';
import { queryOptions, withRouteTarget } from './route-target.ts';

/**
 * A runner's HTTP adapter: how the runner service serves one module as `POST /bench-<name>-<target>`.
 * It lives with the service, not the runner, so a change to the HTTP surface edits no runner folder.
 */
export interface HttpAdapter<Opts, Result, Q extends OptionTable = OptionTable> {
  /** Route target names: `POST /bench-<name>-<target>` for each. */
  readonly targets: readonly string[];
  /** The query's option table (docs/runner-api.md is generated from it): the CLI's without the route-owned names, plus the benchmark's names. */
  readonly options: Q;
  /**
   * Typed query values (parsed once with `options`) and the route's target to the module's
   * option values (validated next by `validate`), what `effectiveParams` echoes besides the
   * options, and what `finish` needs. `given`: the raw names the caller sent.
   */
  fromQuery(q: OptionValues<Q>, t: ResolvedTarget, given: Record<string, unknown>): { values: Record<string, unknown>; echo?: Record<string, unknown>; post?: Record<string, unknown> };
  /** The options as effectiveParams show them (default: without the operator's URLs and key). */
  shown?(opts: Opts): Record<string, unknown>;
  /** The result as the shard returns it (the benchmark's fields, sorted samples, redactions). */
  finish?(result: Result, post: Record<string, unknown>, t: ResolvedTarget): Record<string, unknown>;
}

/** An adapter whose types are erased for the route table. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyHttpAdapter = HttpAdapter<any, any, any>;

/** Every route target, in route-table order: an adapter's `targets` unless it names its own. */
export const ROUTE_TARGETS: readonly string[] = ['replay', 'socketio', 'socketio-csr', 'ws', 'uws', 'anycable', 'pusher', 'pusher-manual', 'soketi'];

type Optional<X, K extends keyof X> = Omit<X, K> & Partial<Pick<X, K>>;

/** Declare a module's adapter with the module's option and result types; `targets` defaults to every route target. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function defineAdapter<O extends object, R extends object, Q extends OptionTable>(_m: RunnerModule<O, R, any>, a: Optional<HttpAdapter<O, R, Q>, 'targets'>): HttpAdapter<O, R, Q> {
  return { targets: ROUTE_TARGETS, ...a };
}

/** Options as effectiveParams echo them: the target's URLs and broadcast key are the operator's, not the caller's. */
export function shownOptions(opts: object): Record<string, unknown> {
  const { url: _1, broadcastUrl: _2, broadcastKey: _3, toxiproxyUrl: _4, ...shown } = opts as Record<string, unknown>;
  return shown;
}

/**
 * The adapter of a module that declares none: the module's options without the route-owned names
 * (the target, its URLs and broadcast key, any other `...Url` option: the operator's, never the
 * query's), the route's target added to the values, the result as it is (the entry still redacts
 * a broadcast key). A new runner gets its routes with no HTTP code.
 */
export function defaultAdapter(m: AnyRunnerModule): AnyHttpAdapter {
  const options = Object.fromEntries(Object.entries(queryOptions(m.options as OptionTable)).filter(([k]) => !/Url$/.test(k))) as OptionTable;
  return { targets: ROUTE_TARGETS, options, fromQuery: (q, t) => ({ values: withRouteTarget(q, t) }) };
}
