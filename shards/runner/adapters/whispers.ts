import type { OptionTable } from '../../../lib/options.ts';
import { whispersModule } from '../../../runners/whispers/module.ts';
import { WHISPERS_OPTIONS } from '../../../runners/whispers/options.ts';
import { defineAdapter } from './adapter.ts';
import { withSortedSamples } from './bench-fields.ts';
import { COMPAT_OPTIONS } from './compat.ts';
import { queryOptions } from './route-target.ts';

const WHISPERS_HTTP_OPTIONS = { ...queryOptions(WHISPERS_OPTIONS), samplesCap: COMPAT_OPTIONS.samplesCap, shard: COMPAT_OPTIONS.shard } as const satisfies OptionTable;

export const whispersAdapter = defineAdapter(whispersModule, {
  // Every route target (the default): one whose protocol has no whispers answers 400 "not supported by this target" (RR_ERR_TARGET_UNSUPPORTED).
  options: WHISPERS_HTTP_OPTIONS,
  fromQuery(q, t) {
    const { samplesCap, shard, ...rest } = q;
    return { values: { ...rest, target: t.server, url: t.url }, echo: { samplesCap, shard }, post: { samplesCap } };
  },
  finish: withSortedSamples,
});
