import { runModuleCli } from './module-cli.ts';
import { soakModule } from '../runners/capacity/soak/module.ts';

/** `npm run bench:soak`: flags, --help, progress, tables and output from the module's table. */
runModuleCli(soakModule);
