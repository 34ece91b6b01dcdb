import type { AnyRunnerModule } from '../../../engine/session/module.ts';
import { RUNNER_MODULES } from '../../../runners/modules.ts';
import { deployImpactModule } from '../../../runners/deploy-impact/module.ts';
import { DEPLOY_IMPACT_OPTIONS } from '../../../runners/deploy-impact/options.ts';
import { idleModule } from '../../../runners/idle/module.ts';
import { IDLE_OPTIONS } from '../../../runners/idle/options.ts';
import { latencyModule } from '../../../runners/latency/module.ts';
import { LATENCY_OPTIONS } from '../../../runners/latency/options.ts';
import { throughputModule } from '../../../runners/throughput/module.ts';
import { THROUGHPUT_OPTIONS } from '../../../runners/throughput/options.ts';
import { whispersModule } from '../../../runners/whispers/module.ts';
import { WHISPERS_OPTIONS } from '../../../runners/whispers/options.ts';
import { defaultAdapter, type AnyHttpAdapter } from './adapter.ts';
import { avalancheAdapter } from './avalanche.ts';
import { benchmarkFields, withSortedSamples } from './bench-fields.ts';
import { capacityAdapter } from './capacity.ts';
import { CLIENT_COMPAT_OPTIONS, COMPAT_OPTIONS, compatAdapter } from './compat.ts';
import { jitterAdapter } from './jitter.ts';
import { queryOptions } from './route-target.ts';

const { samplesCap, label, shard } = COMPAT_OPTIONS;
const { channel, acProtocol } = CLIENT_COMPAT_OPTIONS;
/** The route's own target and URL, never the query's nor a broadcast URL the module has no option for. */
const onTarget = (v: Record<string, unknown>, t: { server: string; url?: string }) => ({ ...v, target: t.server, url: t.url });
const { reconnectStrategy, ...LATENCY_QUERY } = queryOptions(LATENCY_OPTIONS);

export const DEPLOY_IMPACT_HTTP_OPTIONS = { ...queryOptions(DEPLOY_IMPACT_OPTIONS), shard };
const deployImpactAdapter = compatAdapter(deployImpactModule, DEPLOY_IMPACT_HTTP_OPTIONS, { echo: ['shard'] });
const latencyAdapter = compatAdapter(latencyModule, { ...LATENCY_QUERY, reconnectStrategy: { ...reconnectStrategy, aliases: ['reconnectMode'] }, samplesCap, label, shard, ...CLIENT_COMPAT_OPTIONS }, { echo: ['samplesCap', 'label', 'shard'], finish: benchmarkFields });
const throughputAdapter = compatAdapter(throughputModule, { ...queryOptions(THROUGHPUT_OPTIONS), samplesCap, shard, channel, acProtocol }, { echo: ['samplesCap', 'shard'], finish: withSortedSamples });
// Every route target (the default): one whose protocol has no whispers answers 400 "not supported by this target" (RR_ERR_TARGET_UNSUPPORTED).
const whispersAdapter = compatAdapter(whispersModule, { ...queryOptions(WHISPERS_OPTIONS), samplesCap, shard }, { echo: ['samplesCap', 'shard'], values: onTarget, finish: withSortedSamples });
// The benchmark's idle routes; a Redis variant is measured with bench:idle --target <name>-redis.
const idleAdapter = compatAdapter(idleModule, { ...queryOptions(IDLE_OPTIONS), channel, acProtocol }, { targets: ['replay', 'ws', 'uws', 'socketio', 'socketio-csr', 'anycable', 'pusher', 'soketi'], values: onTarget });

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
