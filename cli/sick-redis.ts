import { runModuleCli } from './module-cli.ts';
import { sickRedisModule } from '../runners/sick-redis/module.ts';

/** `npm run bench:sick-redis`: flags, --help, goal lines and the figure file from the module. */
runModuleCli(sickRedisModule);
