import { avalancheModule } from './avalanche/module.ts';
import { capacityModule } from './capacity/module.ts';
import { soakModule } from './capacity/soak/module.ts';
import { deployImpactModule } from './deploy-impact/module.ts';
import type { AnyRunnerModule } from '../engine/session/module.ts';
import { idleModule } from './idle/module.ts';
import { sickRedisModule } from './sick-redis/module.ts';
import { jitterModule } from './jitter/module.ts';
import { latencyModule } from './latency/module.ts';
import { throughputModule } from './throughput/module.ts';
import { whispersModule } from './whispers/module.ts';

/**
 * Every runner module, in route-table order: the CLIs, the runner service's route table and the
 * coordinator's table of tests are generated from these. A new runner is one module file and one
 * line here.
 */
export const RUNNER_MODULES: readonly AnyRunnerModule[] = [jitterModule, idleModule, latencyModule, throughputModule, whispersModule, avalancheModule, deployImpactModule, capacityModule, soakModule, sickRedisModule];
