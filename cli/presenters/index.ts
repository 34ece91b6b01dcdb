import type { AnyRunnerModule } from '../../engine/session/module.ts';
import type { Presented } from '../presenter.ts';
import { avalancheCli } from './avalanche.ts';
import { capacityCli } from './capacity.ts';
import { deployImpactCli } from './deploy-impact.ts';
import { idleCli } from './idle.ts';
import { jitterCli } from './jitter.ts';
import { latencyCli } from './latency.ts';
import { sickRedisCli } from './sick-redis.ts';
import { soakCli } from './soak.ts';
import { throughputCli } from './throughput.ts';
import { whispersCli } from './whispers.ts';

/** The runners that show more than the CLI's defaults; a module absent here runs with the defaults. */
export const CLI_PRESENTERS: readonly Presented[] = [jitterCli, idleCli, latencyCli, throughputCli, whispersCli, avalancheCli, deployImpactCli, capacityCli, soakCli, sickRedisCli];

/** A module's own presentation, if it has one. */
export const presenterOf = (m: AnyRunnerModule) => CLI_PRESENTERS.find((p) => p.module.name === m.name)?.cli;
