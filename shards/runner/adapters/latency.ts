import type { OptionTable } from '../../../lib/options.ts';
import { latencyModule } from '../../../runners/latency/module.ts';
import { LATENCY_OPTIONS } from '../../../runners/latency/options.ts';
import { defineAdapter } from './adapter.ts';
import { benchmarkFields } from './bench-fields.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from './compat.ts';
import { queryOptions, withRouteTarget } from './route-target.ts';

const { reconnectStrategy, ...Q } = queryOptions(LATENCY_OPTIONS);
const LATENCY_HTTP_OPTIONS = { ...Q, reconnectStrategy: { ...reconnectStrategy, aliases: ['reconnectMode'] }, samplesCap: COMPAT_OPTIONS.samplesCap, label: COMPAT_OPTIONS.label, shard: COMPAT_OPTIONS.shard, ...CLIENT_COMPAT_OPTIONS } as const satisfies OptionTable;

export const latencyAdapter = defineAdapter(latencyModule, {
  options: LATENCY_HTTP_OPTIONS,
  fromQuery(q, t, given) {
    const { samplesCap, label, shard, channel, acProtocol, clientLib, reconnectBaseMs, ...rest } = q;
    checkClientCompat({ channel, acProtocol, clientLib, reconnectBaseMs, reconnectStrategy: rest.reconnectStrategy, backoffApplies: t.definition.reconnect === 'library' }, t.route, given);
    return { values: withRouteTarget({ ...rest, reconnectBaseMs }, t), echo: { samplesCap, label, shard }, post: { samplesCap, label } };
  },
  finish: benchmarkFields,
});
