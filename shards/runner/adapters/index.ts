import type { AnyRunnerModule } from '../../../engine/session/module.ts';
import { RUNNER_MODULES } from '../../../runners/modules.ts';
import { defaultAdapter, type AnyHttpAdapter } from './adapter.ts';
import { avalancheAdapter } from './avalanche.ts';
import { capacityAdapter } from './capacity.ts';
import { deployImpactAdapter } from './deploy-impact.ts';
import { idleAdapter } from './idle.ts';
import { jitterAdapter } from './jitter.ts';
import { latencyAdapter } from './latency.ts';
import { throughputAdapter } from './throughput.ts';
import { whispersAdapter } from './whispers.ts';

/**
 * The runner service's adapter per module name. A module not named here gets the default adapter
 * (its options as the query, the route's target added), so a new runner is served with no HTTP
 * code; `false` opts a module out of HTTP: soak (hours long, the CLI's) and sick-redis (it starts
 * and breaks its own Redis) have never had a route and keep having none.
 */
const HTTP_ADAPTERS: Readonly<Record<string, AnyHttpAdapter | false>> = {
  jitter: jitterAdapter,
  idle: idleAdapter,
  latency: latencyAdapter,
  throughput: throughputAdapter,
  whispers: whispersAdapter,
  avalanche: avalancheAdapter,
  'deploy-impact': deployImpactAdapter,
  capacity: capacityAdapter,
  soak: false,
  'sick-redis': false,
};

/** A module's HTTP adapter: its own, else the default; undefined when it opts out of HTTP. */
export function httpAdapterOf(m: AnyRunnerModule): AnyHttpAdapter | undefined {
  // Own keys only: a module named after an Object.prototype member is not served by it.
  const a = Object.hasOwn(HTTP_ADAPTERS, m.name) ? HTTP_ADAPTERS[m.name] : undefined;
  return a === false ? undefined : (a ?? defaultAdapter(m));
}

/** The modules with an HTTP entry (`POST /bench-<name>-<target>`), in route-table order, each with its adapter. */
export const HTTP_MODULES: readonly (AnyRunnerModule & { readonly http: AnyHttpAdapter })[] = RUNNER_MODULES.flatMap((m) => {
  const http = httpAdapterOf(m);
  return http ? [{ ...m, http }] : [];
});

/** The modules the coordinator can fan out over shards (`npm run bench:multi -- --test <name>`): it sends them over HTTP. */
export const MULTI_MODULES = HTTP_MODULES.filter((m) => m.multi);
