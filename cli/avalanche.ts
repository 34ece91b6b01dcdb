import { runModuleCli } from './module-cli.ts';
import { avalancheModule } from '../runners/avalanche/module.ts';

/** `npm run bench:avalanche`: flags, --help, progress and output from the module's table. */
runModuleCli(avalancheModule);
