import { ReboundError } from '../../../lib/errors.ts';
import type { OptionTable } from '../../../lib/options.ts';
import type { AnyRunnerModule } from '../../../engine/session/module.ts';
import type { ResolvedTarget } from '../types.ts';
import { ROUTE_TARGETS, type AnyHttpAdapter } from './adapter.ts';
import { withRouteTarget } from './route-target.ts';

/**
 * Query names of the benchmark (anycable/nodejs-websocket-bench) that Rebound accepts so its curl
 * scripts run unchanged, with what each means here.
 */
export const COMPAT_OPTIONS = {
  duration: { type: 'int', default: 0, min: 0, max: 86_400, doc: "the benchmark's run window, s. Rebound's drop window is msgs x interval (drops stop when publishing ends), so this is echoed, not used" },
  samplesCap: { type: 'int', default: 0, min: 0, max: 100_000, doc: "> 0 adds latencySamplesSorted: at most this many evenly spaced sorted latency samples, ms (read from the exact mergeable latencyHistogram, bucket-rounded to 3 significant digits)" },
  label: { type: 'optional-string', default: undefined, pattern: /^[\w.:-]{1,64}$/, doc: "the result's `label` (default the benchmark's label of the target: anycable, socketio-default, socketio-csr, uws)" },
  shard: { type: 'optional-string', default: undefined, pattern: /^[\w.-]{1,64}$/, doc: 'a label for this shard, echoed in effectiveParams' },
} as const satisfies OptionTable;

/**
 * The benchmark's AnyCable client knobs. Rebound honours the values it has and refuses the others
 * with the reason (never accepted and ignored).
 */
export const CLIENT_COMPAT_OPTIONS = {
  channel: { type: 'optional-string', default: undefined, pattern: /^[\w$:.-]{1,128}$/, doc: "AnyCable channel: `$pubsub` (the default: streamFrom) only; any other channel needs a Rails RPC backend Rebound does not have (400)" },
  acProtocol: { type: 'optional-string', default: undefined, pattern: /^[\w.-]{1,64}$/, doc: 'AnyCable subprotocol: `actioncable-v1-ext-json` only (the extended protocol Rebound\'s client, history and session restores use); others 400' },
  clientLib: { type: 'optional-string', default: undefined, pattern: /^[\w@/.-]{1,64}$/, doc: '`anycable` / `@anycable/core` (the client Rebound uses); `actioncable` is refused: @rails/actioncable is not installed' },
  reconnectBaseMs: { type: 'int', default: 500, min: 1, max: 60_000, doc: "base of the tuned reconnect backoff, ms (the benchmark's RECONNECT_BASE_MS): attempt k waits U(0, min(5 s, base x 2^k)); needs reconnectMode=tuned, and on jitter/latency a target whose client library reconnects (replay, anycable, socketio-csr); otherwise 400" },
} as const satisfies OptionTable;

const ANYCABLE_ROUTES = new Set(['anycable', 'replay']);
const refuse = (option: string, why: string) => new ReboundError('RR_ERR_OPTION_INVALID', `query option "${option}" ${why}`, { details: { option } });

/** Refuse what cannot apply; returns nothing because every accepted value is what Rebound does anyway. */
export function checkClientCompat(v: { channel?: string | undefined; acProtocol?: string | undefined; clientLib?: string | undefined; reconnectBaseMs?: number; reconnectStrategy?: string; backoffApplies?: boolean }, route: string, given: Record<string, unknown>): void {
  for (const k of ['channel', 'acProtocol', 'clientLib']) {
    if (k in given && !ANYCABLE_ROUTES.has(route)) throw refuse(k, `applies to AnyCable routes (anycable, replay) only, not "${route}"`);
  }
  if (v.channel !== undefined && v.channel !== '$pubsub') throw refuse('channel', `"${v.channel}" needs a Rails RPC backend (a channel class behind anycable-go's RPC) that Rebound does not have; only $pubsub (streamFrom) runs here`);
  if (v.acProtocol !== undefined && v.acProtocol !== 'actioncable-v1-ext-json') throw refuse('acProtocol', `"${v.acProtocol}" is not supported: Rebound's AnyCable client speaks actioncable-v1-ext-json only (stream history and session restores need the extended protocol)`);
  if (v.clientLib === 'actioncable') throw refuse('clientLib', '"actioncable" needs @rails/actioncable, which is not installed; Rebound drives AnyCable with @anycable/core (clientLib=anycable)');
  if (v.clientLib !== undefined && v.clientLib !== 'anycable' && v.clientLib !== '@anycable/core') throw refuse('clientLib', `"${v.clientLib}" is unknown: anycable (@anycable/core) is the client Rebound has`);
  if ('reconnectBaseMs' in given) {
    // The benchmark reads it only in its tuned mode; elsewhere it would be accepted and ignored.
    if (v.reconnectStrategy !== 'tuned') throw refuse('reconnectBaseMs', 'sets the base of the tuned reconnect backoff: add reconnectMode=tuned (with the default strategy the client library keeps its own backoff)');
    if (v.backoffApplies === false) throw refuse('reconnectBaseMs', `does not apply to "${route}": the runner reconnects these clients itself after jitterMs, with no backoff; it applies where the client library reconnects (replay, anycable, socketio-csr)`);
  }
}

/**
 * A route that adds the benchmark's names to a module's query (`options`): the `echo` names are
 * echoed in effectiveParams (samplesCap and label also reach `finish`) and taken out of the values
 * unless the module has them too (jitter's workers); the AnyCable client knobs the table has are
 * taken out and checked by checkClientCompat (reconnectBaseMs stays a module option); the rest runs
 * on the route's target (`values`, default withRouteTarget).
 */
export function compatAdapter(m: AnyRunnerModule, options: OptionTable, o: Partial<Pick<AnyHttpAdapter, 'targets' | 'shown' | 'finish'>> & { echo?: readonly string[]; values?: (v: Record<string, unknown>, t: ResolvedTarget) => Record<string, unknown> }): AnyHttpAdapter {
  const { echo: echoed = [], values = withRouteTarget, ...hooks } = o;
  return {
    targets: ROUTE_TARGETS,
    ...hooks,
    options,
    fromQuery(q, t, given) {
      const v: Record<string, unknown> = { ...q };
      const take = (names: readonly string[]) => {
        const out: Record<string, unknown> = {};
        for (const k of names) {
          if (!(k in options)) continue;
          out[k] = v[k];
          if (!(k in m.options)) delete v[k];
        }
        return out;
      };
      const echo = take(echoed);
      if ('channel' in options) checkClientCompat({ ...take(['channel', 'acProtocol', 'clientLib']), reconnectBaseMs: v.reconnectBaseMs as number | undefined, reconnectStrategy: v.reconnectStrategy as string | undefined, backoffApplies: t.definition.reconnect === 'library' }, t.route, given);
      const post = Object.fromEntries(Object.entries(echo).filter(([k]) => k === 'samplesCap' || k === 'label'));
      return { values: values(v, t), echo, post };
    },
  };
}
