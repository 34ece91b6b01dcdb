import type { MergeSpec } from '../../engine/session/module.ts';
import { RUNNER_MODULES } from '../../runners/modules.ts';

/** Counts the runner service's benchmark adapters add to a finished result (shards/runner/adapters/bench-fields.ts). */
const ROUTE_FIELDS: MergeSpec = { counts: ['latencySamples', 'sessionRestores', 'publishedMessages'] };

type ListKey = 'sum' | 'max' | 'countMaps' | 'counts' | 'nullableCounts' | 'nonNegative';

/** Every declaration's lists joined (each field once), and the declarations themselves for their hooks. */
export type MergePlan = { readonly [K in ListKey]: readonly string[] } & { readonly specs: readonly MergeSpec[] };

/**
 * The union of the declarations: a field name means one thing in every result, so a shard's result
 * is checked and added field by field whatever test it ran (and a result from a runner this tree
 * does not know is still checked for every field it shares).
 */
export function mergePlan(declared: readonly MergeSpec[]): MergePlan {
  // Declarations are shared (DELIVERY_MERGE by most runners): each hook runs once.
  const specs = [...new Set(declared)];
  const union = (k: ListKey) => [...new Set(specs.flatMap((s) => s[k] ?? []))];
  const plan = { sum: union('sum'), max: union('max'), countMaps: union('countMaps'), counts: union('counts'), nullableCounts: union('nullableCounts'), nonNegative: union('nonNegative'), specs };
  // One fleet figure per field: a field two runners merge differently would depend on the module order.
  const twice = plan.sum.filter((f) => plan.max.includes(f) || plan.countMaps.includes(f));
  if (twice.length) throw new Error(`merge declarations disagree: ${twice.join(', ')} both summed and merged otherwise`);
  return plan;
}

/** What the coordinator merges by: every runner module's declarations (runners/modules.ts). */
export const MERGE_PLAN: MergePlan = mergePlan([...RUNNER_MODULES.flatMap((m) => m.merge ?? []), ROUTE_FIELDS]);
