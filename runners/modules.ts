import type { AnyRunnerModule } from './engine/module.ts';
import { idleModule } from './idle/module.ts';
import { jitterModule } from './jitter/module.ts';
import { latencyModule } from './latency/module.ts';
import { throughputModule } from './throughput/module.ts';
import { whispersModule } from './whispers/module.ts';

/**
 * Every runner module: the CLIs, the runner service's route table and the coordinator's table of
 * tests are generated from these. A new runner is one module file and one line here.
 */
export const RUNNER_MODULES: readonly AnyRunnerModule[] = [jitterModule, idleModule, latencyModule, throughputModule, whispersModule];

/** The modules with an HTTP entry, in route-table order. */
export const HTTP_MODULES = RUNNER_MODULES.filter((m) => m.http);
