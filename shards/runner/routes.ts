import { HTTP_MODULES } from '../../runners/modules.ts';
import { moduleEntry } from './entry.ts';
import type { BenchEntry } from './types.ts';
import { avalancheEntry } from './entries/avalanche.ts';
import { capacityEntry } from './entries/capacity.ts';
import { deployImpactEntry } from './entries/deploy-impact.ts';

const generated = Object.fromEntries(HTTP_MODULES.map((m) => [m.name, moduleEntry(m)]));
const entry = (test: string): BenchEntry => generated[test] ?? ({ jitter: undefined, idle: undefined, latency: undefined, throughput: undefined, whispers: undefined, avalanche: avalancheEntry, 'deploy-impact': deployImpactEntry, capacity: capacityEntry } as Record<string, BenchEntry | undefined>)[test]!;

/**
 * THE route table: every test the runner serves, each as `POST /bench-<test>-<target>`, generated
 * from the runner modules (runners/modules.ts): a runner is one module, never a hand-written route.
 */
export const BENCH_TABLE: readonly BenchEntry[] = ['jitter', 'idle', 'latency', 'throughput', 'whispers', 'avalanche', 'deploy-impact', 'capacity'].map(entry);

export interface BenchRoute {
  path: string;
  entry: BenchEntry;
  target: string;
}

export function benchRoutes(table: readonly BenchEntry[] = BENCH_TABLE): BenchRoute[] {
  return table.flatMap((entry) => entry.targets.map((target) => ({ path: `/bench-${entry.test}-${target}`, entry, target })));
}
