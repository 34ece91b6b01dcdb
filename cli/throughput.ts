import { runModuleCli } from './module-cli.ts';
import { throughputModule } from '../runners/throughput/module.ts';

/** `npm run bench:throughput`: flags, --help, progress and output from the module's table. */
runModuleCli(throughputModule);
