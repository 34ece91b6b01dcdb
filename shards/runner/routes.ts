import { loadedTargetNames } from '../../engine/targets/index.ts';
import { HTTP_MODULES } from './adapters/index.ts';
import { moduleEntry } from './entry.ts';
import type { BenchEntry } from './types.ts';

/**
 * THE route table: every test the runner serves, each as `POST /bench-<test>-<target>`, generated
 * from the runner modules (runners/modules.ts) and their adapters (./adapters/index.ts): a runner
 * is one module, never a hand-written route (a module without an adapter gets the default one).
 */
export const BENCH_TABLE: readonly BenchEntry[] = HTTP_MODULES.map((m) => moduleEntry(m, m.http));

/** One test's entry by name (the route table's). */
export const benchEntry = (test: string): BenchEntry | undefined => BENCH_TABLE.find((e) => e.test === test);

export function benchRoutes(table: readonly BenchEntry[] = BENCH_TABLE) {
  // The operator's target files (TARGET_MODULES) get every test's route; a test a target cannot run refuses it with its coded error.
  return table.flatMap((entry) => [...entry.targets, ...loadedTargetNames()].map((target) => ({ path: `/bench-${entry.test}-${target}`, entry, target })));
}
