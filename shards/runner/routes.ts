import type { BenchEntry } from './types.ts';
import { avalancheEntry } from './entries/avalanche.ts';
import { capacityEntry } from './entries/capacity.ts';
import { deployImpactEntry } from './entries/deploy-impact.ts';
import { idleEntry } from './entries/idle.ts';
import { jitterEntry } from './entries/jitter.ts';
import { latencyEntry } from './entries/latency.ts';
import { throughputEntry } from './entries/throughput.ts';
import { whispersEntry } from './entries/whispers.ts';

/**
 * THE route table: every test the runner serves, each as `POST /bench-<test>-<target>`.
 * Adding a runner is one entry here (its HTTP option table, `prepare` and `run`), never a
 * hand-written route.
 */
export const BENCH_TABLE: readonly BenchEntry[] = [jitterEntry, idleEntry, latencyEntry, throughputEntry, whispersEntry, avalancheEntry, deployImpactEntry, capacityEntry];

export interface BenchRoute {
  path: string;
  entry: BenchEntry;
  target: string;
}

export function benchRoutes(table: readonly BenchEntry[] = BENCH_TABLE): BenchRoute[] {
  return table.flatMap((entry) => entry.targets.map((target) => ({ path: `/bench-${entry.test}-${target}`, entry, target })));
}
