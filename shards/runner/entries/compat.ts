import type { OptionTable } from '../../../lib/options.ts';

/**
 * Query names of the benchmark (anycable/nodejs-websocket-bench) that Rebound accepts so its curl
 * scripts run unchanged, with what each means here.
 */
export const COMPAT_OPTIONS = {
  duration: { type: 'int', default: 0, min: 0, max: 86_400, doc: "the benchmark's run window, s. Rebound's drop window is msgs x interval (drops stop when publishing ends), so this is echoed, not used" },
  samplesCap: { type: 'int', default: 0, min: 0, max: 1_000_000, doc: "the benchmark's sorted-sample export; Rebound returns an exact mergeable HdrHistogram (latencyHistogram) instead, so this is echoed, not used" },
  shard: { type: 'optional-string', default: undefined, pattern: /^[\w.-]{1,64}$/, doc: 'a label for this shard, echoed in effectiveParams' },
} as const satisfies OptionTable;
