import { runModuleCli } from './module-cli.ts';
import { latencyModule } from '../runners/latency/module.ts';

/** `npm run bench:latency`: flags, --help, progress and output from the module's table. */
runModuleCli(latencyModule);
