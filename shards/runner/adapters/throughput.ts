import type { OptionTable } from '../../../lib/options.ts';
import { throughputModule } from '../../../runners/throughput/module.ts';
import { THROUGHPUT_OPTIONS } from '../../../runners/throughput/options.ts';
import { defineAdapter } from './adapter.ts';
import { withSortedSamples } from './bench-fields.ts';
import { CLIENT_COMPAT_OPTIONS, checkClientCompat, COMPAT_OPTIONS } from './compat.ts';
import { queryOptions, withRouteTarget } from './route-target.ts';

const THROUGHPUT_HTTP_OPTIONS = { ...queryOptions(THROUGHPUT_OPTIONS), samplesCap: COMPAT_OPTIONS.samplesCap, shard: COMPAT_OPTIONS.shard, channel: CLIENT_COMPAT_OPTIONS.channel, acProtocol: CLIENT_COMPAT_OPTIONS.acProtocol } as const satisfies OptionTable;

export const throughputAdapter = defineAdapter(throughputModule, {
  options: THROUGHPUT_HTTP_OPTIONS,
  fromQuery(q, t, given) {
    const { samplesCap, shard, channel, acProtocol, ...rest } = q;
    checkClientCompat({ channel, acProtocol }, t.route, given);
    return { values: withRouteTarget(rest, t), echo: { samplesCap, shard }, post: { samplesCap } };
  },
  finish: withSortedSamples,
});
